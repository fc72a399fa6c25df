/**
 * The HTTP server around the app: where it listens (HOST, PORT) and what it answers for a
 * request Node refuses before Koa sees it — header fields or a URL over the size limit (431),
 * a malformed request (400) — as JSON `{message}` like every other failure.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type Koa from 'koa';

/** The largest request line plus headers accepted (Node's default too); beyond it, 431. */
export const MAX_HEADER_BYTES = 16 * 1024;

function refuse(socket: Socket, status: 400 | 431, message: string): void {
  const body = JSON.stringify({ message });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function createServer(app: Koa): http.Server {
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app.callback());
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A reset or a socket already answered has no one left to read an answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if (err.code === 'HPE_HEADER_OVERFLOW') refuse(socket, 431, `the request line and headers exceed ${MAX_HEADER_BYTES} bytes (is the URL too long?)`);
    else refuse(socket, 400, 'malformed HTTP request');
  });
  return server;
}

/** Listens on host (every interface when empty) and port (0: any free one); resolves with the address bound. */
export function listen(server: http.Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host || undefined, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
