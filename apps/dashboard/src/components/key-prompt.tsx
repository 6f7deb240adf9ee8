import { useEffect, useRef } from 'react';
import { useConnection } from '../connection/connection.tsx';
import { SecretForm } from './secret-form.tsx';

/**
 * Asks for the API key once the control plane answers 401 (SERVICE_API_KEY is set). A native
 * modal dialog: it traps focus and closes on Escape without a library.
 */
export function KeyPrompt() {
  const { keyRequired, apiKey, setApiKey } = useConnection();
  const dialog = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (keyRequired && !element.open) element.showModal();
    if (!keyRequired && element.open) element.close();
  }, [keyRequired]);

  return (
    <>
      {keyRequired ? (
        <button type="button" className="primary" onClick={() => dialog.current?.showModal()}>
          Enter API key
        </button>
      ) : null}
      <dialog ref={dialog} aria-labelledby="key-title">
        <SecretForm
          className="key-form"
          fieldId="api-key"
          label="API key"
          submitLabel="Use this key"
          onSecret={setApiKey}
          moreActions={
            <button type="button" onClick={() => dialog.current?.close()}>
              Not now
            </button>
          }
        >
          <h2 id="key-title">API key required</h2>
          <p className="muted">
            {apiKey
              ? 'The control plane refused the key this tab used. Enter the current SERVICE_API_KEY.'
              : 'This control plane requires its SERVICE_API_KEY. The key stays in this tab only.'}
          </p>
        </SecretForm>
      </dialog>
    </>
  );
}
