// The component's own module: the package's index also exports a test registry that imports
// @rjsf/validator-ajv8, which the dashboard does not install (it cannot run under the CSP).
import Form from '@rjsf/core/lib/components/Form.js';
import type { ErrorSchema, RJSFSchema } from '@rjsf/utils';
import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import type { Lane } from './call-function.ts';
import { TEXT_BUTTONS } from './form-buttons.tsx';
import { cspSafeValidator } from './schema-validator.ts';

type Input = Record<string, unknown>;
type Mode = 'form' | 'json';

/** A schema the form can lay out: an object with named members. Anything else is written as JSON. */
export function formSchemaOf(schema: Record<string, unknown> | undefined): RJSFSchema | undefined {
  if (!schema || typeof schema.properties !== 'object' || schema.properties === null) return undefined;
  if (Object.keys(schema.properties).length === 0) return undefined;
  if (schema.type !== undefined && schema.type !== 'object') return undefined;
  return schema as RJSFSchema;
}

const isObject = (value: unknown): value is Input =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The JSON text's object, or why it is not one. */
function parseInput(text: string): { input: Input } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `The input is not JSON (${(error as Error).message}).` };
  }
  if (!isObject(value)) return { problem: 'The input must be a JSON object, such as {"text": "Hello"}.' };
  return { input: value };
}

function LaneChoice({ lane, onChange }: { lane: Lane; onChange(lane: Lane): void }) {
  return (
    <fieldset className="lane">
      <legend>How to call</legend>
      <label>
        <input type="radio" name="lane" checked={lane === 'sync'} onChange={() => onChange('sync')} /> Wait
        for the result
      </label>
      <label>
        <input type="radio" name="lane" checked={lane === 'async'} onChange={() => onChange('async')} /> Queue
        it and follow the execution
      </label>
    </fieldset>
  );
}

interface InputEditorProps {
  /** The function's input_schema; without members to lay out, the input is written as JSON. */
  schema: Record<string, unknown> | undefined;
  /** The input to start from: an object, or text the address carried that is not one. */
  initial: Input | string | undefined;
  /** The server's refusal of the last call, by field of the input. */
  serverErrors: ErrorSchema | undefined;
  pending: boolean;
  onRun(input: Input, lane: Lane): void;
}

/**
 * The input of a call, as a form generated from the function's input_schema (rjsf, validated in
 * the browser before sending) or as raw JSON (sent as written: the server's 400 names what is
 * wrong), and how to call: wait for the result or queue it.
 */
export function InputEditor({ schema, initial, serverErrors, pending, onRun }: InputEditorProps) {
  const formSchema = formSchemaOf(schema);
  const [mode, setMode] = useState<Mode>(formSchema && typeof initial !== 'string' ? 'form' : 'json');
  const [formData, setFormData] = useState<Input>(isObject(initial) ? initial : {});
  const [text, setText] = useState(() =>
    typeof initial === 'string' ? initial : JSON.stringify(initial ?? {}, null, 2),
  );
  const [textProblem, setTextProblem] = useState<string | null>(null);
  const [lane, setLane] = useState<Lane>('sync');
  // How many fields the browser's check refused on the last Run (each says why beside it).
  const [refused, setRefused] = useState(0);
  // The server's field errors stay until the input is edited.
  const [shownErrors, setShownErrors] = useState(serverErrors);
  useEffect(() => setShownErrors(serverErrors), [serverErrors]);

  function toJson() {
    setText(JSON.stringify(formData, null, 2));
    setTextProblem(null);
    setMode('json');
  }

  function toForm() {
    const parsed = parseInput(text);
    if ('problem' in parsed) {
      setTextProblem(`${parsed.problem} Fix it to switch to the form.`);
      return;
    }
    setFormData(parsed.input);
    setMode('form');
  }

  function runJson(event: FormEvent) {
    event.preventDefault();
    const parsed = parseInput(text);
    if ('problem' in parsed) {
      setTextProblem(parsed.problem);
      return;
    }
    setTextProblem(null);
    onRun(parsed.input, lane);
  }

  const actions: ReactNode = (
    <>
      <LaneChoice lane={lane} onChange={setLane} />
      {mode === 'form' && refused > 0 ? (
        <p className="field-error" role="alert">
          {refused === 1 ? 'One field needs' : `${refused} fields need`} a change before the call: see above.
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={pending}>
          {pending ? 'Running…' : 'Run'}
        </button>
      </div>
    </>
  );

  return (
    <section aria-labelledby="input-title">
      <div className="page-head">
        <h2 id="input-title">Input</h2>
        {formSchema ? (
          <fieldset className="segmented" aria-label="Edit the input as">
            <button type="button" aria-pressed={mode === 'form'} onClick={() => mode === 'json' && toForm()}>
              Form
            </button>
            <button type="button" aria-pressed={mode === 'json'} onClick={() => mode === 'form' && toJson()}>
              JSON
            </button>
          </fieldset>
        ) : null}
      </div>
      {!formSchema ? (
        <p className="muted">
          {schema
            ? 'This function’s input_schema names no members to lay out as a form: write the input as JSON.'
            : 'No input_schema is known for this target: write the input as JSON.'}
        </p>
      ) : null}
      {mode === 'form' && formSchema ? (
        <div className="card input-form">
          <Form
            schema={formSchema}
            validator={cspSafeValidator}
            formData={formData}
            onChange={(event) => {
              setFormData(isObject(event.formData) ? event.formData : {});
              setShownErrors(undefined);
            }}
            onSubmit={(event) => {
              setRefused(0);
              onRun(isObject(event.formData) ? event.formData : {}, lane);
            }}
            // Also keeps rjsf from logging the refusal to the console as an error.
            onError={(errors) => setRefused(errors.length)}
            extraErrors={shownErrors}
            templates={{ ButtonTemplates: TEXT_BUTTONS }}
            idPrefix="input"
            noHtml5Validate
            showErrorList={false}
            focusOnFirstError
          >
            {actions}
          </Form>
        </div>
      ) : (
        <form className="card stack input-json" onSubmit={runJson} aria-label="Input as JSON">
          <label htmlFor="input-json">Input (a JSON object)</label>
          <textarea
            id="input-json"
            className="code-input"
            rows={10}
            spellCheck={false}
            value={text}
            onChange={(event) => {
              setText(event.target.value);
              setShownErrors(undefined);
            }}
            aria-invalid={textProblem ? true : undefined}
            aria-describedby={textProblem ? 'input-json-problem' : undefined}
          />
          {textProblem ? (
            <p id="input-json-problem" className="field-error">
              {textProblem}
            </p>
          ) : null}
          {actions}
        </form>
      )}
    </section>
  );
}
