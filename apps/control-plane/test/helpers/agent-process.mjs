// A minimal real agent run as a child process by presence tests: it listens on 127.0.0.1,
// registers with the control plane, heartbeats every HEARTBEAT_MS and answers GET /health.
// Tests kill it (SIGKILL) to see the control plane notice a dead agent.
import { createServer } from 'node:http';

const controlPlane = process.env.CONTROL_PLANE_URL;
const nodeId = process.env.NODE_ID;
const interval = Number(process.env.HEARTBEAT_MS ?? 200);

const server = createServer((req, res) => {
  if (req.url === '/health') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'healthy', node_id: nodeId, version: '1.0.0' }));
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
});

server.listen(0, '127.0.0.1', async () => {
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  const post = (path, body) =>
    fetch(`${controlPlane}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const registered = await post('/api/v1/nodes/register', {
    id: nodeId,
    version: '1.0.0',
    base_url: baseUrl,
  });
  if (!registered.ok) {
    console.error(`registration failed: ${registered.status}`);
    process.exit(1);
  }
  const beat = async () => {
    const response = await post(`/api/v1/nodes/${nodeId}/heartbeat`, {
      status: 'ready',
      version: '1.0.0',
    }).catch(() => null);
    if (response) await response.arrayBuffer();
  };
  await beat();
  setInterval(beat, interval);
  console.log(`ready ${baseUrl}`);
});
