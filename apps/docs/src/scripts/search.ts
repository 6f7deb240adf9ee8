import { isStopword } from '../../contract/stopwords.ts';

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
interface PagefindSearch {
  results: { id: string; data: () => Promise<PagefindResultData> }[];
}
interface PagefindModule {
  init?: () => Promise<void>;
  search: (query: string) => Promise<PagefindSearch>;
}

/** One result of the site API's search (GET /api/v1/search), the fields the box shows. */
interface ApiResult {
  title: string;
  snippet: string;
  path: string;
  anchor: string;
  sections: { section: string; anchor: string }[];
}

/** A page found, with the sections listed under it; excerpts are HTML (escaped text, `<mark>`). */
interface FoundPage {
  url: string;
  title: string;
  excerpt: string;
  sections: { url: string; title: string; excerpt: string }[];
}

const PAGEFIND_URL = '/pagefind/pagefind.js';
const API_URL = '/api/v1/search';
const MAX_PAGES = 6;
const MAX_SECTIONS = 3;
/** Quiet time after the last key before a search runs, so typing does not send a request a key. */
const DEBOUNCE_MS = 120;

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

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Whether this site serves the search API: unknown until the first search asks it. A site hosted
 * as static files has no API (its answer is a 404 page, or nothing); the box then uses Pagefind.
 */
let api: 'unknown' | 'served' | 'absent' = 'unknown';

/**
 * The site API's ranking, the one agents get (typos, half-typed words, one result per page).
 * null when the API cannot answer here or now: not served, rate limited, failing, or offline.
 */
async function fromApi(query: string, signal: AbortSignal): Promise<FoundPage[] | null> {
  if (api === 'absent') return null;
  let response: Response;
  try {
    response = await fetch(`${API_URL}?q=${encodeURIComponent(query)}&limit=${MAX_PAGES}`, {
      headers: { accept: 'application/json' },
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw error;
    return null;
  }
  const json = (response.headers.get('content-type') ?? '').startsWith('application/json');
  // 404 or an HTML page: a static host without the API; 503: deploy/nginx/docs-static.conf's
  // answer for /api/. The front server itself never answers 503.
  if ([404, 405, 501, 503].includes(response.status) || (response.ok && !json)) {
    api = 'absent';
    return null;
  }
  if (!response.ok) return null;
  api = 'served';
  const body = (await response.json()) as { results: ApiResult[] };
  const at = (path: string, anchor: string) => (anchor ? `${path}#${anchor}` : path);
  return body.results.map((result) => ({
    url: at(result.path, result.anchor),
    title: result.title,
    excerpt: escapeHtml(result.snippet),
    // The text before a page's first heading is the page itself, which its own row opens.
    sections: result.sections
      .filter((other) => other.anchor !== '')
      .map((other) => ({
        url: at(result.path, other.anchor),
        title: other.section,
        excerpt: '',
      })),
  }));
}

/**
 * The words of a question Pagefind can match. Pagefind wants every word of a query on a page, so
 * "why does my agent show offline" found nothing: the common words are dropped first.
 */
export function pagefindWords(query: string): string[] {
  const words = query
    .toLowerCase()
    .split(/[^\p{L}\p{N}_.-]+/u)
    .filter(Boolean);
  const meaningful = words.filter((word) => !isStopword(word));
  return meaningful.length > 0 ? meaningful : words;
}

/**
 * Pagefind's results for a question: all its meaningful words at once, or when no page has them
 * all, the pages that have the most of them (each word searched alone), best placed first.
 */
async function fromPagefind(query: string): Promise<FoundPage[]> {
  const module = await loadPagefind();
  const words = pagefindWords(query);
  let results = (await module.search(words.join(' '))).results;
  if (results.length === 0 && words.length > 1) {
    const tally = new Map<
      string,
      { result: PagefindSearch['results'][number]; words: number; rank: number }
    >();
    for (const single of await Promise.all(words.map((word) => module.search(word)))) {
      single.results.forEach((result, rank) => {
        const seen = tally.get(result.id);
        if (seen) {
          seen.words += 1;
          seen.rank += rank;
        } else tally.set(result.id, { result, words: 1, rank });
      });
    }
    results = [...tally.values()]
      .sort((a, b) => b.words - a.words || a.rank - b.rank)
      .map((entry) => entry.result);
  }
  const pages = await Promise.all(results.slice(0, MAX_PAGES).map((result) => result.data()));
  return pages.map((page) => ({
    url: canonicalUrl(page.url),
    title: page.meta.title?.replace(/ · Switchyard$/, '') ?? page.url,
    // Pagefind excerpts are escaped page text with <mark> around matches; keep only those marks.
    excerpt: page.excerpt.replace(/<(?!\/?mark>)[^>]*>/g, ''),
    sections: (page.sub_results ?? [])
      .filter((sub) => sub.url.includes('#') && !sub.url.endsWith('#_top'))
      .map((sub) => ({
        url: canonicalUrl(sub.url),
        title: sub.title,
        excerpt: sub.excerpt.replace(/<(?!\/?mark>)[^>]*>/g, ''),
      })),
  }));
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
    link.append(heading);
    if (excerpt !== '') {
      const snippet = document.createElement('span');
      snippet.className = 'search-result-excerpt';
      snippet.innerHTML = excerpt;
      link.append(snippet);
    }
    item.append(link);
    item.addEventListener('mousemove', () => setActive(options.findIndex((o) => o.element === item)));
    list.append(item);
    options.push({ url, element: item });
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  let inFlight: AbortController | undefined;

  const show = (query: string, pages: FoundPage[]) => {
    list.replaceChildren();
    options = [];
    for (const page of pages) {
      addOption(page.url, page.title, page.excerpt, 'page');
      for (const section of page.sections.slice(0, MAX_SECTIONS)) {
        addOption(section.url, section.title, section.excerpt, 'section');
      }
    }
    status.textContent =
      pages.length === 0
        ? `No results for “${query}”`
        : `${pages.length} page${pages.length === 1 ? '' : 's'} found`;
    setActive(options.length > 0 ? 0 : -1);
  };

  const run = async (query: string) => {
    inFlight?.abort();
    const controller = new AbortController();
    inFlight = controller;
    try {
      const pages = (await fromApi(query, controller.signal)) ?? (await fromPagefind(query));
      if (query === latest) show(query, pages);
    } catch {
      if (controller.signal.aborted || query !== latest) return;
      status.textContent = 'Search is available once the site is built (npm run build).';
    }
  };

  const schedule = () => {
    const query = input.value.trim();
    latest = query;
    clearTimeout(timer);
    if (query === '') {
      inFlight?.abort();
      open(false);
      return;
    }
    open(true);
    timer = setTimeout(() => void run(query), DEBOUNCE_MS);
  };

  input.addEventListener('input', schedule);
  input.addEventListener('focus', () => {
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
