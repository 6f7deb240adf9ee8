import { type FormEvent, useEffect, useRef, useState } from 'react';
import { useConnection } from '../connection/connection.tsx';

/**
 * Asks for the API key once the control plane answers 401 (SERVICE_API_KEY is set). A native
 * modal dialog: it traps focus and closes on Escape without a library.
 */
export function KeyPrompt() {
  const { keyRequired, apiKey, setApiKey } = useConnection();
  const dialog = useRef<HTMLDialogElement>(null);
  const [value, setValue] = useState('');

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (keyRequired && !element.open) element.showModal();
    if (!keyRequired && element.open) element.close();
  }, [keyRequired]);

  function submit(event: FormEvent) {
    event.preventDefault();
    const key = value.trim();
    if (key) {
      setApiKey(key);
      setValue('');
    }
  }

  return (
    <>
      {keyRequired ? (
        <button type="button" className="primary" onClick={() => dialog.current?.showModal()}>
          Enter API key
        </button>
      ) : null}
      <dialog ref={dialog} aria-labelledby="key-title">
        <form className="key-form" onSubmit={submit}>
          <h2 id="key-title">API key required</h2>
          <p className="muted">
            {apiKey
              ? 'The control plane refused the key this tab used. Enter the current SERVICE_API_KEY.'
              : 'This control plane requires its SERVICE_API_KEY. The key stays in this tab only.'}
          </p>
          <label htmlFor="api-key">API key</label>
          <input
            id="api-key"
            type="password"
            autoComplete="off"
            value={value}
            onChange={(event) => setValue(event.target.value)}
          />
          <div className="actions">
            <button type="submit" className="primary">
              Use this key
            </button>
            <button type="button" onClick={() => dialog.current?.close()}>
              Not now
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
