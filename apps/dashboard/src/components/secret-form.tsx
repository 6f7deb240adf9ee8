import { type FormEvent, type ReactNode, useState } from 'react';

/**
 * A form that takes one secret (the API key, the connector token): a password field that is
 * never autofilled, submitted trimmed, and emptied once given.
 */
export function SecretForm({
  fieldId,
  label,
  submitLabel,
  onSecret,
  className,
  formLabel,
  children,
  moreActions,
}: {
  fieldId: string;
  label: string;
  submitLabel: string;
  onSecret(secret: string): void;
  className: string;
  /** The form's accessible name, when no heading inside names it. */
  formLabel?: string;
  /** What comes before the field: a heading, what the secret is for. */
  children: ReactNode;
  /** Buttons after the submit one. */
  moreActions?: ReactNode;
}) {
  const [value, setValue] = useState('');
  function submit(event: FormEvent) {
    event.preventDefault();
    const secret = value.trim();
    if (secret) {
      onSecret(secret);
      setValue('');
    }
  }
  return (
    <form className={className} onSubmit={submit} aria-label={formLabel}>
      {children}
      <label htmlFor={fieldId}>{label}</label>
      <input
        id={fieldId}
        type="password"
        autoComplete="off"
        value={value}
        onChange={(event) => setValue(event.target.value)}
      />
      <div className="actions">
        <button type="submit" className="primary">
          {submitLabel}
        </button>
        {moreActions}
      </div>
    </form>
  );
}
