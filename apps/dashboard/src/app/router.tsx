import { createRootRoute, createRoute, createRouter, Link, lazyRouteComponent } from '@tanstack/react-router';
import { validateExecutionFilters } from '../executions/execution-filters.ts';
import { OverviewPage } from '../overview/overview-page.tsx';
import { validatePlaygroundSearch } from '../playground/playground-search.ts';
import { opsRoutes } from './ops-routes.ts';
import { Shell } from './shell.tsx';

function NotFound() {
  return (
    <>
      <h1>Page not found</h1>
      <p>
        The dashboard has no page at this address. Go to the <Link to="/">overview</Link>, the{' '}
        <Link to="/nodes">nodes</Link> or the <Link to="/executions">executions</Link>.
      </p>
    </>
  );
}

const rootRoute = createRootRoute({ component: Shell, notFoundComponent: NotFound });

// The overview is in the first load; every other page's code loads when its route is first
// visited or preloaded (a link hovered or focused), so the first page does not wait for the rest.

const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  component: OverviewPage,
});

const nodesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/nodes',
  component: lazyRouteComponent(() => import('../nodes/nodes-page.tsx'), 'NodesPage'),
});

const nodeRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/nodes/$nodeId',
  component: lazyRouteComponent(() => import('../nodes/node-page.tsx'), 'NodePage'),
});

const executionsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/executions',
  validateSearch: validateExecutionFilters,
  component: lazyRouteComponent(() => import('../executions/executions-page.tsx'), 'ExecutionsPage'),
});

const executionRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/executions/$executionId',
  component: lazyRouteComponent(() => import('../executions/execution-page.tsx'), 'ExecutionPage'),
});

/**
 * Starts the workflow graph's layout worker (ELK, 1.4 MB of code that takes a few hundred
 * milliseconds to start) as soon as a workflows route matches or is preloaded: from the index, so
 * it is ready when a workflow is opened; on a workflow, while its page's code and DAG load. Not
 * awaited, so the route does not wait for it.
 */
function startLayoutEngine() {
  void import('../workflows/elk-layout.ts').then((layout) => layout.startLayoutEngine());
}

const workflowsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/workflows',
  loader: startLayoutEngine,
  component: lazyRouteComponent(() => import('../workflows/workflows-page.tsx'), 'WorkflowsPage'),
});

const workflowRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/workflows/$workflowId',
  loader: startLayoutEngine,
  component: lazyRouteComponent(() => import('../workflows/workflow-page.tsx'), 'WorkflowPage'),
});

const playgroundRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/playground',
  validateSearch: validatePlaygroundSearch,
  component: lazyRouteComponent(() => import('../playground/playground-page.tsx'), 'PlaygroundPage'),
});

const approvalsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/approvals',
  component: lazyRouteComponent(() => import('../approvals/approvals-page.tsx'), 'ApprovalsPage'),
});

const routeTree = rootRoute.addChildren([
  indexRoute,
  nodesRoute,
  nodeRoute,
  executionsRoute,
  executionRoute,
  workflowsRoute,
  workflowRoute,
  playgroundRoute,
  approvalsRoute,
  ...opsRoutes(rootRoute),
]);

/** Code-based routes under /ui/, where the control plane serves the app. */
export const router = createRouter({ routeTree, basepath: '/ui', defaultPreload: 'intent' });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
