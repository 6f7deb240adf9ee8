import type { ReactNode } from 'react';
import { useDocsUrl } from './docs-url.ts';

/** An empty list that says why it is empty and what to do next. */
export function EmptyState({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="empty">
      <p>
        <strong>{title}</strong>
      </p>
      {children}
    </div>
  );
}

/** The documentation's first-agent tutorial, the next step from any empty page. */
export function TutorialLink() {
  const docs = useDocsUrl();
  return <a href={`${docs}/docs/getting-started/first-agent`}>Follow the first-agent tutorial</a>;
}
