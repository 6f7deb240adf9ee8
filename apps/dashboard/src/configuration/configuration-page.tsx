import { unwrap } from '@switchyard/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { EmptyState } from '../components/empty-state.tsx';
import { ProblemMessage } from '../components/problem-message.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { useConnection } from '../connection/connection.tsx';
import { ConfigProblem } from './config-problem.tsx';
import {
  CONFIGS_KEY,
  CONTROL_PLANE_CONFIG,
  configListQuery,
  configQuery,
  configVersionQuery,
  configVersionsQuery,
  saveConfig,
} from './config-queries.ts';

const NAME_PATTERN = '[A-Za-z0-9._\\-]{1,128}';

/** One version's text, read when opened. */
function VersionText({ name, version }: { name: string; version: number }) {
  const { client } = useConnection();
  const text = useQuery(configVersionQuery(client, name, version));
  if (text.error) return <ProblemMessage error={text.error} context={`Could not read version ${version}`} />;
  if (!text.data) return <p className="muted">Loading version {version}…</p>;
  if (text.data.content === null) return <p className="muted">This version records the deletion.</p>;
  return (
    // Focusable, so a keyboard can scroll a long line sideways.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll by keyboard.
    <pre className="config-text" tabIndex={0}>
      {text.data.content}
    </pre>
  );
}

function Versions({ name }: { name: string }) {
  const { client } = useConnection();
  const versions = useQuery(configVersionsQuery(client, name));
  const [open, setOpen] = useState<number | null>(null);
  const list = [...(versions.data?.versions ?? [])].reverse();
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      {versions.error ? (
        <ProblemMessage error={versions.error} context="Could not list the versions" />
      ) : null}
      <ul className="plain-list" aria-label={`Versions of ${name}`}>
        {list.map((version) => (
          <li key={version.version} className="card">
            <div className="page-head">
              <p>
                Version {version.version} · <RelativeTime iso={version.created_at} />
                {version.updated_by ? ` · by ${version.updated_by}` : ''}
                {version.deleted ? ' · deleted' : ` · ${version.bytes} bytes`}
              </p>
              <button
                type="button"
                aria-expanded={open === version.version}
                onClick={() => setOpen(open === version.version ? null : version.version)}
              >
                {open === version.version ? 'Hide' : 'Show'} version {version.version}
              </button>
            </div>
            {open === version.version ? <VersionText name={name} version={version.version} /> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The editor of one stored configuration: its text, saved with PUT; a refusal lists what to fix. */
function Editor({ name, isNew, onSaved }: { name: string; isNew: boolean; onSaved(name: string): void }) {
  const { client } = useConnection();
  const queryClient = useQueryClient();
  const config = useQuery({ ...configQuery(client, name), enabled: !isNew });
  const [draft, setDraft] = useState<string | null>(null);
  const text = draft ?? config.data?.content ?? '';
  const save = useMutation({
    mutationFn: () => saveConfig(client, name, text),
    onSuccess: async (saved) => {
      // What was sent is what is stored: shown at once, without reading it back.
      queryClient.setQueryData(configQuery(client, name).queryKey, { ...saved, content: text });
      setDraft(null);
      await queryClient.invalidateQueries({ queryKey: CONFIGS_KEY });
      onSaved(saved.name);
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate();
  }
  return (
    <section className="card ops-card" aria-labelledby="editor-title">
      <div className="page-head">
        <h2 id="editor-title" className="mono">
          {name}
        </h2>
        {config.data ? (
          <span className="muted">
            version {config.data.version} · {config.data.bytes} bytes ·{' '}
            <RelativeTime iso={config.data.updated_at} />
            {config.data.updated_by ? ` by ${config.data.updated_by}` : ''}
          </span>
        ) : null}
      </div>
      {name === CONTROL_PLANE_CONFIG ? (
        <p className="muted">
          The control plane's own settings: saving checks every setting; a reload applies them.
        </p>
      ) : null}
      {config.error ? <ProblemMessage error={config.error} context={`Could not read ${name}`} /> : null}
      {config.isLoading ? <p className="muted">Loading {name}…</p> : null}
      {!config.isLoading ? (
        <form className="stack" onSubmit={submit} aria-label={`Edit ${name}`}>
          <label htmlFor="config-text">Text (YAML)</label>
          <textarea
            id="config-text"
            className="code-input"
            rows={14}
            spellCheck={false}
            value={text}
            onChange={(event) => setDraft(event.target.value)}
            aria-invalid={save.error ? true : undefined}
          />
          {save.error ? <ConfigProblem error={save.error} context={`${name} was not saved`} /> : null}
          {save.isSuccess ? (
            <p className="muted" role="status">
              Saved as version {save.data.version}.
            </p>
          ) : null}
          <div className="actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              {save.isPending ? 'Saving…' : 'Save'}
            </button>
            {draft !== null && !isNew ? (
              <button type="button" onClick={() => setDraft(null)}>
                Discard changes
              </button>
            ) : null}
          </div>
        </form>
      ) : null}
    </section>
  );
}

/** POST /api/v1/configs/reload; without SERVICE_CONFIG_SOURCE=db the server answers 503, shown as it says. */
function Reload() {
  const { client } = useConnection();
  const reload = useMutation({ mutationFn: () => unwrap(client.POST('/api/v1/configs/reload')) });
  return (
    <section aria-labelledby="reload-title">
      <h2 id="reload-title">Reload</h2>
      <p className="muted">
        Applies the stored <code>{CONTROL_PLANE_CONFIG}</code> configuration on every replica, when the
        control plane reads its settings from the database (SERVICE_CONFIG_SOURCE=db).
      </p>
      <button type="button" onClick={() => reload.mutate()} disabled={reload.isPending}>
        {reload.isPending ? 'Reloading…' : 'Reload configuration'}
      </button>
      {reload.error ? <ProblemMessage error={reload.error} context="The reload was refused" /> : null}
      {reload.data ? (
        <div className="card" role="status">
          <p>
            Reloaded <RelativeTime iso={reload.data.reloaded_at} />;{' '}
            {reload.data.replicas_notified
              ? 'the other replicas were told to reload.'
              : 'the other replicas could not be told and keep their settings until reloaded.'}
          </p>
          <p>
            Changed: {reload.data.changed.length > 0 ? reload.data.changed.join(', ') : 'nothing'}.
            {reload.data.restart_required.length > 0
              ? ` Needs a restart: ${reload.data.restart_required.join(', ')}.`
              : ''}
          </p>
        </div>
      ) : null}
    </section>
  );
}

/**
 * Stored configurations: the list, one opened in an editor (saved with the server's checks, each
 * refusal shown per setting), its versions, and the reload of the control plane's own.
 */
export function ConfigurationPage() {
  const { client } = useConnection();
  const configs = useQuery(configListQuery(client));
  const [selected, setSelected] = useState<{ name: string; isNew: boolean } | null>(null);
  const [newName, setNewName] = useState('');
  const list = configs.data?.configs ?? [];

  function create(event: FormEvent) {
    event.preventDefault();
    const name = newName.trim();
    if (!name) return;
    setSelected({ name, isNew: !list.some((config) => config.name === name) });
    setNewName('');
  }

  return (
    <>
      <div className="page-head">
        <h1>Configuration</h1>
        {configs.data ? <span className="muted">{configs.data.total} stored</span> : null}
      </div>
      {configs.error ? (
        <ProblemMessage error={configs.error} context="Could not list the configurations" />
      ) : null}
      {configs.isPending ? <p className="muted">Loading configurations…</p> : null}
      {configs.data && list.length === 0 ? (
        <EmptyState title="No configuration is stored">
          <p>
            Name one below to write its first version. The control plane reads{' '}
            <code>{CONTROL_PLANE_CONFIG}</code> when started with SERVICE_CONFIG_SOURCE=db; other names hold
            any text your agents fetch.
          </p>
        </EmptyState>
      ) : null}
      {list.length > 0 ? (
        <ul className="key-list" aria-label="Stored configurations">
          {list.map((config) => (
            <li key={config.name}>
              <button
                type="button"
                className="key-button"
                aria-pressed={selected?.name === config.name}
                onClick={() => setSelected({ name: config.name, isNew: false })}
              >
                <code>{config.name}</code>
                <span className="muted">
                  v{config.version} · <RelativeTime iso={config.updated_at} />
                </span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <form className="filters" onSubmit={create} aria-label="New configuration">
        <label>
          New configuration name
          <input
            value={newName}
            onChange={(event) => setNewName(event.target.value)}
            pattern={NAME_PATTERN}
            title="Letters, digits, “.”, “_” and “-”, at most 128"
            placeholder={CONTROL_PLANE_CONFIG}
          />
        </label>
        <div className="actions">
          <button type="submit">Open editor</button>
        </div>
      </form>
      {selected ? (
        <>
          <Editor
            key={selected.name}
            name={selected.name}
            isNew={selected.isNew}
            onSaved={(name) => setSelected({ name, isNew: false })}
          />
          {!selected.isNew ? <Versions name={selected.name} /> : null}
        </>
      ) : list.length > 0 ? (
        <p className="muted">Choose a configuration to read and edit it.</p>
      ) : null}
      <Reload />
    </>
  );
}
