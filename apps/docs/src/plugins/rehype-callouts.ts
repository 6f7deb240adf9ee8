import { type DefaultBuildType, type IAlert, type IOptions, rehypeGithubAlerts } from 'rehype-github-alerts';

// The plugin's hast types, not this package's own copy of @types/hast: the two copies differ in
// version, and the elements built here are handed to the plugin.
type Element = Extract<IAlert['icon'], object>;
type ElementContent = Parameters<DefaultBuildType>[1][number];

/** Stroke paths of each kind's icon, on a 24×24 grid. */
const ICONS: Record<string, string[]> = {
  NOTE: ['M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z', 'M12 11v5', 'M12 8h.01'],
  TIP: [
    'M9 18h6',
    'M10 21h4',
    'M12 3a6 6 0 0 0-4 10.5c.6.6 1 1.3 1 2.1v.4h6v-.4c0-.8.4-1.5 1-2.1A6 6 0 0 0 12 3z',
  ],
  IMPORTANT: ['M4 4h16v12H9l-5 4z', 'M12 7v4', 'M12 13.5h.01'],
  WARNING: ['M12 3L2 20h20z', 'M12 10v4', 'M12 17h.01'],
  CAUTION: ['M8 3h8l5 5v8l-5 5H8l-5-5V8z', 'M12 8v5', 'M12 16h.01'],
};

function icon(keyword: string): Element {
  return {
    type: 'element',
    tagName: 'svg',
    properties: {
      viewBox: '0 0 24 24',
      width: '18',
      height: '18',
      ariaHidden: 'true',
      className: ['callout-icon'],
    },
    children: (ICONS[keyword] ?? []).map(
      (d): Element => ({
        type: 'element',
        tagName: 'path',
        properties: {
          d,
          fill: 'none',
          stroke: 'currentColor',
          strokeWidth: '2',
          strokeLinecap: 'round',
          strokeLinejoin: 'round',
        },
        children: [],
      }),
    ),
  };
}

const ALERTS: IAlert[] = [
  ['NOTE', 'Note'],
  ['TIP', 'Tip'],
  ['IMPORTANT', 'Important'],
  ['WARNING', 'Warning'],
  ['CAUTION', 'Caution'],
].map(([keyword, title]) => ({ keyword: keyword!, title: title!, icon: icon(keyword!) }));

/**
 * Builds one callout as a named `role="note"` region (an `<aside>` inside `<main>` would be a
 * complementary landmark nested in another). The visible label repeats the accessible name, so it
 * is hidden from assistive technology and from the search index.
 */
function buildCallout(alert: IAlert, children: ElementContent[]): Element {
  return {
    type: 'element',
    tagName: 'div',
    properties: {
      className: ['callout', `callout-${alert.keyword.toLowerCase()}`],
      role: 'note',
      ariaLabel: alert.title,
    },
    children: [
      {
        type: 'element',
        tagName: 'p',
        properties: { className: ['callout-title'], ariaHidden: 'true', dataPagefindIgnore: 'all' },
        children: [alert.icon as Element, { type: 'text', value: alert.title }],
      },
      ...children,
    ],
  };
}

/**
 * GitHub's alert syntax (`> [!NOTE]`, `> [!TIP]`, `> [!IMPORTANT]`, `> [!WARNING]`,
 * `> [!CAUTION]`) rendered as callouts, so a page reads the same here, on GitHub and in its `.md`
 * variant. rehype-github-alerts finds the alerts; the element is built by `buildCallout`. As Astro's
 * `rehypePlugins` takes it: the plugin and its options.
 */
export const rehypeCallouts: [typeof rehypeGithubAlerts, IOptions] = [
  rehypeGithubAlerts,
  { alerts: ALERTS, build: buildCallout },
];
