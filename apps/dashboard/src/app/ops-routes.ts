import './ops.css';
import { type AnyRoute, createRoute, lazyRouteComponent } from '@tanstack/react-router';

/**
 * The operations pages' routes under the root route: memory, discovery, webhooks, forwarder,
 * configs. Each page's code loads when its route is first visited or preloaded.
 */
export function opsRoutes<Root extends AnyRoute>(rootRoute: Root) {
  const page = <Path extends string>(path: Path, component: ReturnType<typeof lazyRouteComponent>) =>
    createRoute({ getParentRoute: () => rootRoute, path, component });
  return [
    page(
      '/memory',
      lazyRouteComponent(() => import('../memory/memory-page.tsx'), 'MemoryPage'),
    ),
    page(
      '/discovery',
      lazyRouteComponent(() => import('../discovery/discovery-page.tsx'), 'DiscoveryPage'),
    ),
    page(
      '/webhooks',
      lazyRouteComponent(() => import('../webhooks/webhooks-page.tsx'), 'WebhooksPage'),
    ),
    page(
      '/observability',
      lazyRouteComponent(() => import('../observability/observability-page.tsx'), 'ObservabilityPage'),
    ),
    page(
      '/configuration',
      lazyRouteComponent(() => import('../configuration/configuration-page.tsx'), 'ConfigurationPage'),
    ),
  ] as const;
}
