/** The slice of Pagefind's browser API this search box uses. */
interface PagefindSubResult {
  title: string;
  url: string;
  excerpt: string;
}
interface PagefindResultData {
  url: string;
  excerpt: string;
  meta: { title?: string };
  sub_results?: PagefindSubResult[];
}
interface PagefindModule {
  init?: () => Promise<void>;
  debouncedSearch: (
    query: string,
    options?: object,
    debounceMs?: number,
  ) => Promise<{ results: { data: () => Promise<PagefindResultData> }[] } | null>;
}

const PAGEFIND_URL = '/pagefind/pagefind.js';
const MAX_PAGES = 6;
const MAX_SECTIONS = 3;

/** Pagefind reports `/docs/x/` (the built file's folder); the site's canonical form has no slash. */
export function canonicalUrl(url: string): string {
  const [path = '', hash] = url.split('#');
  const clean = path.replace(/index\.html$/, '').replace(/(.)\/+$/, '$1');
  return hash ? `${clean}#${hash}` : clean;
}

let pagefind: Promise<PagefindModule> | undefined;
function loadPagefind(): Promise<PagefindModule> {
  pagefind ??= import(/* @vite-ignore */ PAGEFIND_URL).then(async (module: PagefindModule) => {
    await module.init?.();
    return module;
  });
  return pagefind;
}

interface Option {
  url: string;
  element: HTMLLIElement;
}

export function setUpSearch(): void {
  const root = document.querySelector<HTMLElement>('.search');
  const input = root?.querySelector<HTMLInputElement>('.search-input');
  const panel = root?.querySelector<HTMLElement>('.search-panel');
  const list = root?.querySelector<HTMLUListElement>('.search-results');
  const status = root?.querySelector<HTMLElement>('.search-status');
  if (!root || !input || !panel || !list || !status) return;

  let options: Option[] = [];
  let active = -1;
  let latest = '';

  const open = (show: boolean) => {
    panel.hidden = !show;
    input.setAttribute('aria-expanded', String(show));
  };
  const setActive = (index: number) => {
    active = index;
    options.forEach((option, i) => {
      option.element.setAttribute('aria-selected', String(i === index));
    });
    const current = options[index];
    if (current) {
      input.setAttribute('aria-activedescendant', current.element.id);
      current.element.scrollIntoView({ block: 'nearest' });
    } else {
      input.removeAttribute('aria-activedescendant');
    }
  };

  const addOption = (url: string, title: string, excerpt: string, kind: 'page' | 'section') => {
    const item = document.createElement('li');
    item.id = `search-option-${options.length}`;
    item.className = `search-result ${kind}`;
    item.setAttribute('role', 'option');
    item.setAttribute('aria-selected', 'false');
    const link = document.createElement('a');
    link.href = url;
    link.tabIndex = -1;
    const heading = document.createElement('span');
    heading.className = 'search-result-title';
    heading.textContent = title;
    const snippet = document.createElement('span');
    snippet.className = 'search-result-excerpt';
    // Pagefind excerpts are escaped page text with <mark> around matches; keep only those marks.
    snippet.innerHTML = excerpt.replace(/<(?!\/?mark>)[^>]*>/g, '');
    link.append(heading, snippet);
    item.append(link);
    item.addEventListener('mousemove', () => setActive(options.findIndex((o) => o.element === item)));
    list.append(item);
    options.push({ url, element: item });
  };

  const run = async () => {
    const query = input.value.trim();
    latest = query;
    if (query === '') {
      open(false);
      return;
    }
    open(true);
    let module: PagefindModule;
    try {
      module = await loadPagefind();
    } catch {
      status.textContent = 'Search is available once the site is built (npm run build).';
      return;
    }
    const search = await module.debouncedSearch(query, {}, 150);
    if (search === null || query !== latest) return;
    const pages = await Promise.all(search.results.slice(0, MAX_PAGES).map((result) => result.data()));
    if (query !== latest) return;
    list.replaceChildren();
    options = [];
    for (const page of pages) {
      const title = page.meta.title?.replace(/ · Switchyard$/, '') ?? page.url;
      addOption(canonicalUrl(page.url), title, page.excerpt, 'page');
      const sections = (page.sub_results ?? []).filter(
        (sub) => sub.url.includes('#') && !sub.url.endsWith('#_top'),
      );
      for (const sub of sections.slice(0, MAX_SECTIONS)) {
        addOption(canonicalUrl(sub.url), sub.title, sub.excerpt, 'section');
      }
    }
    status.textContent =
      pages.length === 0
        ? `No results for “${query}”`
        : `${search.results.length} page${search.results.length === 1 ? '' : 's'} found`;
    setActive(options.length > 0 ? 0 : -1);
  };

  input.addEventListener('input', () => {
    void run();
  });
  input.addEventListener('focus', () => {
    void loadPagefind().catch(() => undefined);
    if (input.value.trim() !== '') open(true);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' && options.length > 0) {
      event.preventDefault();
      setActive((active + 1) % options.length);
    } else if (event.key === 'ArrowUp' && options.length > 0) {
      event.preventDefault();
      setActive((active - 1 + options.length) % options.length);
    } else if (event.key === 'Enter') {
      const option = options[active];
      if (option) {
        event.preventDefault();
        window.location.assign(option.url);
      }
    } else if (event.key === 'Escape') {
      open(false);
      input.blur();
    }
  });
  document.addEventListener('click', (event) => {
    if (!root.contains(event.target as Node)) open(false);
  });
  document.addEventListener('keydown', (event) => {
    const target = event.target as HTMLElement;
    const typing = target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName);
    if ((event.key === '/' && !typing) || (event.key === 'k' && (event.metaKey || event.ctrlKey))) {
      event.preventDefault();
      input.focus();
      input.select();
    }
  });
}
