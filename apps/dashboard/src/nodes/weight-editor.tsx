import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useState } from 'react';
import { ProblemMessage } from '../components/problem-message.tsx';
import { SecretForm } from '../components/secret-form.tsx';
import { NOT_ABOUT_THE_KEY, useConnection } from '../connection/connection.tsx';
import { connectorTokenSecret } from '../connection/session-secret.ts';
import { overviewQuery } from '../overview/overview-query.ts';
import { NODES_KEY } from './node-queries.ts';
import { setWeight, tokenAccessQuery, WRITE_CAPABILITY } from './weight-queries.ts';

/** The control plane refuses weights above this (MAX_TRAFFIC_WEIGHT). */
const MAX_WEIGHT = 10_000;

export interface VersionWeight {
  version: string;
  weight: number;
  routable: boolean;
}

const percent = (share: number) => `${Math.round(share * 1000) / 10}%`;

/** Asks for the connector token; it stays in this tab only, like the API key. */
function TokenForm({ refused, onToken }: { refused: boolean; onToken(token: string): void }) {
  return (
    <SecretForm
      className="stack card"
      formLabel="Connector access"
      fieldId="connector-token"
      label="Connector token"
      submitLabel="Use this token"
      onSecret={onToken}
    >
      <p className="muted">
        {refused
          ? 'The connector refused that token. Enter the SERVICE_CONNECTOR_TOKEN this control plane runs with.'
          : 'Weights change through the connector API, which takes its own token (SERVICE_CONNECTOR_TOKEN), not the API key. The token stays in this tab only.'}
      </p>
    </SecretForm>
  );
}

/** One version's weight: a whole number from 0 (no new executions) to MAX_WEIGHT. */
function WeightForm({ nodeId, entry, token }: { nodeId: string; entry: VersionWeight; token: string }) {
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const [value, setValue] = useState(String(entry.weight));
  const save = useMutation({
    // The connector's 401 is about its token, not the API key.
    meta: { [NOT_ABOUT_THE_KEY]: true },
    mutationFn: (weight: number) => setWeight(client, token, { nodeId, version: entry.version, weight }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: NODES_KEY }),
  });
  const fieldId = `weight-${entry.version}`;
  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate(Number(value));
  }
  return (
    <form className="weight-form" onSubmit={submit} aria-label={`Weight of version ${entry.version}`}>
      <label htmlFor={fieldId}>
        <code>{entry.version}</code>
        <span className="muted">
          {' '}
          now {entry.weight}
          {entry.routable ? '' : ', not routable'}
        </span>
      </label>
      <input
        id={fieldId}
        type="number"
        inputMode="numeric"
        required
        min={0}
        max={MAX_WEIGHT}
        step={1}
        value={value}
        onChange={(event) => setValue(event.target.value)}
      />
      <button type="submit" disabled={save.isPending}>
        {save.isPending ? 'Saving…' : 'Set weight'}
      </button>
      {save.isSuccess ? (
        <p className="muted" role="status">
          {entry.version} now has weight {save.data.traffic_weight}: {percent(save.data.traffic_share)} of new
          executions.
        </p>
      ) : null}
      {save.error ? (
        <ProblemMessage error={save.error} context={`The weight of ${entry.version} was not set`} />
      ) : null}
    </form>
  );
}

/** The weights of a node's versions, for a token the connector knows: editable or read-only. */
function TokenWeights({
  nodeId,
  versions,
  token,
  onToken,
}: {
  nodeId: string;
  versions: VersionWeight[];
  token: string;
  onToken(token: string | undefined): void;
}) {
  const { client } = useConnection();
  const access = useQuery(tokenAccessQuery(client, token));
  const forget = (
    <button type="button" onClick={() => onToken(undefined)}>
      Forget the connector token
    </button>
  );
  if (access.isPending) return <p className="muted">Asking the connector what this token may do…</p>;
  if (access.error)
    return <ProblemMessage error={access.error} context="Could not reach the connector API" />;
  switch (access.data.state) {
    case 'token-refused':
      return <TokenForm refused onToken={onToken} />;
    case 'read-only':
      return (
        <div className="stack">
          <p className="muted">
            Weights are read-only for this token: it lacks {WRITE_CAPABILITY} (it grants{' '}
            {access.data.granted.length > 0 ? access.data.granted.join(', ') : 'nothing'}).
          </p>
          <div className="actions">{forget}</div>
        </div>
      );
    case 'editable':
      return (
        <div className="stack card">
          {versions.map((entry) => (
            <WeightForm key={entry.version} nodeId={nodeId} entry={entry} token={token} />
          ))}
          <div className="actions">{forget}</div>
        </div>
      );
  }
}

/**
 * The node's traffic weights, editable where the connector allows: with the connector on and a
 * token granting versions:write. Otherwise it says why they are read-only and what would change
 * that. Nothing is asked of the connector before there is a token to ask with.
 */
export function WeightEditor({ nodeId, versions }: { nodeId: string; versions: VersionWeight[] }) {
  const { client } = useConnection();
  const [token, setToken] = useState(connectorTokenSecret.read);
  const overview = useQuery(overviewQuery(client));
  const adoptToken = (next: string | undefined) => {
    connectorTokenSecret.write(next);
    setToken(next);
  };
  let body: ReactNode;
  if (overview.isPending) body = null;
  else if (overview.error)
    body = <ProblemMessage error={overview.error} context="Could not read the deployment" />;
  else if (!overview.data.connector.enabled)
    body = (
      <p className="muted">
        Weights are read-only here: the connector API is off on this deployment. Start the control plane with
        SERVICE_CONNECTOR_TOKEN set to change them from this page.
      </p>
    );
  else if (!token) body = <TokenForm refused={false} onToken={adoptToken} />;
  else body = <TokenWeights nodeId={nodeId} versions={versions} token={token} onToken={adoptToken} />;

  return (
    <section aria-labelledby="weights-title">
      <h2 id="weights-title">Traffic weights</h2>
      <p className="muted">
        New executions of this node are split among its routable versions in proportion to their weights; 0
        sends a version none. Running executions never move.
      </p>
      {body}
    </section>
  );
}
