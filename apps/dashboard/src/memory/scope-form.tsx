import { type FormEvent, useState } from 'react';
import { MEMORY_SCOPES, type MemoryScope, type ScopeChoice } from './memory-queries.ts';

/** Picks the scope to browse: applying it replaces the scope the page shows. */
export function ScopeForm({ value, onApply }: { value: ScopeChoice; onApply(choice: ScopeChoice): void }) {
  const [scope, setScope] = useState<MemoryScope>(value.scope);
  const [scopeId, setScopeId] = useState(value.scopeId);
  function apply(event: FormEvent) {
    event.preventDefault();
    onApply({ scope, scopeId: scope === 'global' ? '' : scopeId.trim() });
  }
  return (
    <form className="filters" onSubmit={apply} aria-label="Memory scope">
      <label htmlFor="memory-scope">
        Scope
        <select
          id="memory-scope"
          value={scope}
          onChange={(event) => setScope(event.target.value as MemoryScope)}
        >
          {MEMORY_SCOPES.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <label htmlFor="memory-scope-id">
        Scope id
        <input
          id="memory-scope-id"
          value={scope === 'global' ? 'global' : scopeId}
          disabled={scope === 'global'}
          required={scope !== 'global'}
          placeholder={scope === 'workflow' ? 'wf_…' : scope === 'session' ? 'sess_…' : 'user id'}
          onChange={(event) => setScopeId(event.target.value)}
        />
      </label>
      <div className="actions">
        <button type="submit" className="primary">
          Show keys
        </button>
      </div>
    </form>
  );
}
