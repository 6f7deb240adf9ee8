import './ops.css';
import { type AnyRoute, createRoute } from '@tanstack/react-router';
import { ConfigurationPage } from '../configuration/configuration-page.tsx';
import { DiscoveryPage } from '../discovery/discovery-page.tsx';
import { MemoryPage } from '../memory/memory-page.tsx';
import { ObservabilityPage } from '../observability/observability-page.tsx';
import { WebhooksPage } from '../webhooks/webhooks-page.tsx';

/** The operations pages' routes under the root route: memory, discovery, webhooks, forwarder, configs. */
export function opsRoutes<Root extends AnyRoute>(rootRoute: Root) {
  const page = <Path extends string>(path: Path, component: () => React.JSX.Element) =>
    createRoute({ getParentRoute: () => rootRoute, path, component });
  return [
    page('/memory', MemoryPage),
    page('/discovery', DiscoveryPage),
    page('/webhooks', WebhooksPage),
    page('/observability', ObservabilityPage),
    page('/configuration', ConfigurationPage),
  ] as const;
}
