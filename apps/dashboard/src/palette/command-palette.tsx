import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { Command } from 'cmdk';
import { useEffect, useRef, useState } from 'react';
import { OPS_PAGES } from '../app/ops-pages.ts';
import type { NodeSummary } from '../nodes/node-queries.ts';
import { NODES_KEY } from '../nodes/node-queries.ts';

/**
 * The command palette: jump to a page, to a node the dashboard knows, or to the node, execution
 * or workflow whose id was typed. cmdk does the filtering and keyboard selection; it sits in a
 * native modal dialog rather than cmdk's Radix dialog, whose scroll lock injects a <style> element
 * the Content-Security-Policy refuses.
 */
export function CommandPalette({ open, onClose }: { open: boolean; onClose(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [search, setSearch] = useState('');
  const nodes = queryClient.getQueryData<NodeSummary[]>(NODES_KEY) ?? [];
  const id = search.trim();

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      setSearch('');
      element.showModal();
    }
    if (!open && element.open) element.close();
  }, [open]);

  function go(action: () => Promise<void>) {
    onClose();
    void action();
  }

  return (
    <dialog ref={dialog} className="palette" aria-label="Command palette" onClose={onClose}>
      {open ? (
        <Command label="Command palette" shouldFilter={true}>
          <Command.Input
            value={search}
            onValueChange={setSearch}
            placeholder="Jump to a page, or type a node, execution or workflow id"
            autoFocus
          />
          <Command.List>
            <Command.Empty>Nothing matches. Type a full id to open it.</Command.Empty>
            {id ? (
              <Command.Group heading="Open by id" forceMount>
                <Command.Item
                  value={`execution ${id}`}
                  forceMount
                  onSelect={() =>
                    go(() => navigate({ to: '/executions/$executionId', params: { executionId: id } }))
                  }
                >
                  Execution {id}
                </Command.Item>
                <Command.Item
                  value={`node ${id}`}
                  forceMount
                  onSelect={() => go(() => navigate({ to: '/nodes/$nodeId', params: { nodeId: id } }))}
                >
                  Node {id}
                </Command.Item>
                <Command.Item
                  value={`workflow ${id}`}
                  forceMount
                  onSelect={() =>
                    go(() => navigate({ to: '/workflows/$workflowId', params: { workflowId: id } }))
                  }
                >
                  Workflow {id}
                </Command.Item>
              </Command.Group>
            ) : null}
            <Command.Group heading="Pages">
              <Command.Item value="page overview" onSelect={() => go(() => navigate({ to: '/' }))}>
                Overview
              </Command.Item>
              <Command.Item value="page nodes" onSelect={() => go(() => navigate({ to: '/nodes' }))}>
                Nodes
              </Command.Item>
              <Command.Item
                value="page executions"
                onSelect={() => go(() => navigate({ to: '/executions' }))}
              >
                Executions
              </Command.Item>
              <Command.Item value="page workflows" onSelect={() => go(() => navigate({ to: '/workflows' }))}>
                Workflows
              </Command.Item>
              <Command.Item
                value="page playground"
                onSelect={() => go(() => navigate({ to: '/playground' }))}
              >
                Playground
              </Command.Item>
              <Command.Item value="page approvals" onSelect={() => go(() => navigate({ to: '/approvals' }))}>
                Approvals
              </Command.Item>
              {OPS_PAGES.map((page) => (
                <Command.Item
                  key={page.to}
                  value={`page ${page.label}`}
                  onSelect={() => go(() => navigate({ to: page.to }))}
                >
                  {page.label}
                </Command.Item>
              ))}
            </Command.Group>
            {nodes.length > 0 ? (
              <Command.Group heading="Nodes">
                {nodes.map((node) => (
                  <Command.Item
                    key={node.node_id}
                    value={`known node ${node.node_id}`}
                    onSelect={() =>
                      go(() => navigate({ to: '/nodes/$nodeId', params: { nodeId: node.node_id } }))
                    }
                  >
                    {node.node_id}
                  </Command.Item>
                ))}
              </Command.Group>
            ) : null}
          </Command.List>
        </Command>
      ) : null}
    </dialog>
  );
}
