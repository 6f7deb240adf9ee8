import { useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useRouterState } from '@tanstack/react-router';
import { lazy, Suspense, useCallback, useEffect, useState } from 'react';
import { KeyPrompt } from '../components/key-prompt.tsx';
import { LiveIndicator } from '../components/live-indicator.tsx';
import { useLiveEvents } from '../live/live-events.tsx';
import { refreshOnEvent } from '../live/refresh.ts';
import { NODES_KEY } from '../nodes/node-queries.ts';
import { usePaletteShortcut } from '../palette/palette-shortcut.ts';
import { OPS_PAGES } from './ops-pages.ts';

/** The palette's code (cmdk and what it uses) loads the first time the palette is opened. */
const CommandPalette = lazy(() =>
  import('../palette/command-palette.tsx').then((module) => ({ default: module.CommandPalette })),
);

const NAV = [
  { to: '/', label: 'Overview' },
  { to: '/nodes', label: 'Nodes' },
  { to: '/executions', label: 'Executions' },
  { to: '/workflows', label: 'Workflows' },
  { to: '/playground', label: 'Playground' },
  { to: '/approvals', label: 'Approvals' },
  ...OPS_PAGES,
] as const;

/** Node events refresh every node query (list and node pages) wherever the user is. */
function useNodeRefresh(): void {
  const queryClient = useQueryClient();
  useLiveEvents((event) => {
    if (event.stream === 'nodes') refreshOnEvent(queryClient, NODES_KEY);
  });
}

/** The frame around every page: header (live state, key prompt, palette), sidebar navigation. */
export function Shell() {
  const [menuOpen, setMenuOpen] = useState(false);
  const [paletteOpen, setPaletteOpen] = useState(false);
  // Mounted from its first opening on, so it keeps its dialog (and its closing) afterwards.
  const [paletteUsed, setPaletteUsed] = useState(false);
  const openPalette = useCallback(() => {
    setPaletteUsed(true);
    setPaletteOpen(true);
  }, []);
  const closePalette = useCallback(() => setPaletteOpen(false), []);
  usePaletteShortcut(openPalette);
  useNodeRefresh();
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  // A navigation closes the narrow-screen menu.
  useEffect(() => {
    void pathname;
    setMenuOpen(false);
  }, [pathname]);

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="header">
        <button
          type="button"
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls="sidebar"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
        <Link to="/" className="brand">
          Switchyard
        </Link>
        <LiveIndicator />
        <KeyPrompt />
        <button type="button" className="palette-button" onClick={openPalette} aria-keyshortcuts="Control+K">
          <span className="label">Jump to…</span>
          <kbd>Ctrl K</kbd>
        </button>
      </header>
      <nav id="sidebar" className={`sidebar${menuOpen ? ' open' : ''}`} aria-label="Sections">
        <ul>
          {NAV.map((item) => (
            <li key={item.to}>
              <Link to={item.to} activeOptions={{ exact: item.to === '/' }}>
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" className="main" tabIndex={-1}>
        <Outlet />
      </main>
      {paletteUsed ? (
        <Suspense fallback={null}>
          <CommandPalette open={paletteOpen} onClose={closePalette} />
        </Suspense>
      ) : null}
    </div>
  );
}
