/** Where the reader's last chosen tab label ("curl", "Python") is kept, for every page. */
const TAB_KEY = 'switchyard-code-tab';

function storedLabel(): string | null {
  try {
    return localStorage.getItem(TAB_KEY);
  } catch {
    return null;
  }
}

function select(group: HTMLElement, tab: HTMLElement): void {
  for (const other of group.querySelectorAll<HTMLElement>('[role="tab"]')) {
    const selected = other === tab;
    other.setAttribute('aria-selected', String(selected));
    other.tabIndex = selected ? 0 : -1;
    const panel = document.getElementById(other.getAttribute('aria-controls') ?? '');
    if (panel) panel.hidden = !selected;
  }
}

/** Selects `label` in every group that offers it, keeping the clicked tab where the reader sees it. */
function choose(label: string, origin?: HTMLElement): void {
  const before = origin?.getBoundingClientRect().top;
  for (const group of document.querySelectorAll<HTMLElement>('.code-tabs')) {
    const tab = [...group.querySelectorAll<HTMLElement>('[role="tab"]')].find((t) => t.dataset.tab === label);
    if (tab) select(group, tab);
  }
  // Groups above may change height; scroll so the tab just chosen stays under the pointer.
  if (origin && before !== undefined) window.scrollBy(0, origin.getBoundingClientRect().top - before);
}

/**
 * The code tabs of a page, as the ARIA tabs pattern has them: click or Enter/Space selects, the
 * arrow keys, Home and End move and select within a group. A choice applies to every group with the
 * same label and is remembered across pages and reloads.
 */
export function setUpCodeTabs(): void {
  const groups = document.querySelectorAll<HTMLElement>('.code-tabs');
  if (groups.length === 0) return;
  const stored = storedLabel();
  if (stored) choose(stored);
  for (const group of groups) {
    const tabs = [...group.querySelectorAll<HTMLElement>('[role="tab"]')];
    const pick = (tab: HTMLElement) => {
      const label = tab.dataset.tab ?? '';
      choose(label, tab);
      try {
        localStorage.setItem(TAB_KEY, label);
      } catch {
        // Private modes may refuse storage; the choice still applies to this page.
      }
    };
    for (const tab of tabs) tab.addEventListener('click', () => pick(tab));
    group.querySelector('[role="tablist"]')?.addEventListener('keydown', (event) => {
      const key = (event as KeyboardEvent).key;
      const current = tabs.indexOf(document.activeElement as HTMLElement);
      if (current === -1) return;
      const target =
        key === 'ArrowRight'
          ? (current + 1) % tabs.length
          : key === 'ArrowLeft'
            ? (current - 1 + tabs.length) % tabs.length
            : key === 'Home'
              ? 0
              : key === 'End'
                ? tabs.length - 1
                : -1;
      if (target === -1) return;
      event.preventDefault();
      tabs[target]!.focus();
      pick(tabs[target]!);
    });
  }
}
