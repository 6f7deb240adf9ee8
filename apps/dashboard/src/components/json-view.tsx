import { useState } from 'react';
import { defaultStyles, JsonView } from 'react-json-view-lite';
import 'react-json-view-lite/dist/index.css';

/** The library's layout classes with the theme's colours (dark mode follows the CSS variables). */
const themed = {
  ...defaultStyles,
  container: 'json-tree',
  label: 'json-label',
  stringValue: 'json-string',
  numberValue: 'json-number',
  booleanValue: 'json-boolean',
  nullValue: 'json-null',
  undefinedValue: 'json-null',
  otherValue: 'json-null',
  punctuation: 'json-punct',
};

interface JsonBlockProps {
  /** The heading above the block, also the accessible name of its copy button. */
  title: string;
  value: unknown;
}

/** Levels shown open at first; deeper ones start collapsed, one click away. */
const OPEN_LEVELS = 3;
const openTopLevels = (level: number) => level < OPEN_LEVELS;

/**
 * A JSON value with a heading and a copy button: objects and arrays as a collapsible tree (the
 * first levels open), anything else as its JSON text.
 */
export function JsonBlock({ title, value }: JsonBlockProps) {
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  const text = JSON.stringify(value, null, 2) ?? 'null';
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('copied');
    } catch {
      setCopied('failed');
    }
    setTimeout(() => setCopied('idle'), 2000);
  }
  return (
    <section>
      <div className="json-head">
        <h2>{title}</h2>
        <button type="button" onClick={copy} aria-label={`Copy ${title} as JSON`}>
          {copied === 'copied' ? 'Copied' : copied === 'failed' ? 'Copy failed' : 'Copy'}
        </button>
      </div>
      <div className="json">
        {value !== null && typeof value === 'object' ? (
          <JsonView data={value} style={themed} shouldExpandNode={openTopLevels} aria-label={title} />
        ) : (
          <code className="json-string">{text}</code>
        )}
      </div>
    </section>
  );
}
