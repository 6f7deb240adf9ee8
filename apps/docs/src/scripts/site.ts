import { setUpCodeTabs } from './code-tabs.ts';
import { setUpSearch } from './search.ts';

const THEME_KEY = 'switchyard-theme';

function setUpThemeToggle(): void {
  const button = document.querySelector<HTMLButtonElement>('.theme-toggle');
  if (!button) return;
  const label = () => {
    const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
    button.setAttribute('aria-label', `Switch to ${next} theme`);
  };
  label();
  button.addEventListener('click', () => {
    const theme = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
    document.documentElement.dataset.theme = theme;
    try {
      localStorage.setItem(THEME_KEY, theme);
    } catch {
      // Private modes may refuse storage; the switch still applies to this page.
    }
    label();
  });
}

function setUpMenu(): void {
  const button = document.querySelector<HTMLButtonElement>('.menu-button');
  const sidebar = document.getElementById('sidebar');
  if (!button || !sidebar) return;
  const setOpen = (open: boolean) => {
    document.body.classList.toggle('nav-open', open);
    button.setAttribute('aria-expanded', String(open));
    button.setAttribute('aria-label', open ? 'Close navigation' : 'Open navigation');
  };
  button.addEventListener('click', () => setOpen(!document.body.classList.contains('nav-open')));
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && document.body.classList.contains('nav-open')) {
      setOpen(false);
      button.focus();
    }
  });
  sidebar.addEventListener('click', (event) => {
    if ((event.target as HTMLElement).closest('a')) setOpen(false);
  });
  sidebar.querySelector('.nav-link.active')?.scrollIntoView({ block: 'center' });
}

/** Shows a short confirmation on a button, then restores its label. */
function flash(label: HTMLElement, text: string): void {
  const original = label.dataset.label ?? label.textContent ?? '';
  label.dataset.label = original;
  label.textContent = text;
  window.setTimeout(() => {
    label.textContent = original;
  }, 1600);
}

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

function setUpCopyButtons(): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>('.copy-code')) {
    button.addEventListener('click', async () => {
      const code = button.closest('.code-block')?.querySelector('pre code, pre');
      const ok = await copyText(code?.textContent ?? '');
      flash(button, ok ? 'Copied' : 'Press Ctrl+C');
    });
  }
  for (const button of document.querySelectorAll<HTMLButtonElement>('.copy-markdown')) {
    const label = button.querySelector<HTMLElement>('.action-label') ?? button;
    button.addEventListener('click', async () => {
      const path = button.dataset.markdownPath;
      if (!path) return;
      try {
        const response = await fetch(path, { headers: { Accept: 'text/markdown' } });
        if (!response.ok) throw new Error(String(response.status));
        flash(label, (await copyText(await response.text())) ? 'Copied' : 'Copy failed');
      } catch {
        flash(label, 'Could not load markdown');
      }
    });
  }
}

/** Highlights the table-of-contents entry of the section being read. */
function setUpTocHighlight(): void {
  const links = [...document.querySelectorAll<HTMLAnchorElement>('.toc-link')];
  if (links.length === 0 || !('IntersectionObserver' in window)) return;
  const byId = new Map(links.map((link) => [decodeURIComponent(link.hash.slice(1)), link]));
  const headings = [...byId.keys()]
    .map((id) => document.getElementById(id))
    .filter((el): el is HTMLElement => el !== null);
  const visible = new Set<string>();
  const observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (entry.isIntersecting) visible.add(entry.target.id);
        else visible.delete(entry.target.id);
      }
      const current = headings.find((heading) => visible.has(heading.id));
      if (!current) return;
      for (const link of links) link.classList.toggle('active', link === byId.get(current.id));
    },
    { rootMargin: '-64px 0px -60% 0px' },
  );
  for (const heading of headings) observer.observe(heading);
}

setUpThemeToggle();
setUpMenu();
setUpCopyButtons();
setUpCodeTabs();
setUpTocHighlight();
setUpSearch();
