/** The operations pages in the sidebar and the palette, in this order. */
export const OPS_PAGES = [
  { to: '/memory', label: 'Memory' },
  { to: '/discovery', label: 'Discovery' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/observability', label: 'Observability' },
  { to: '/configuration', label: 'Configuration' },
] as const;
