import fs from 'node:fs';
import type { RequestListener } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { generate } from 'selfsigned';
import { tempDir } from './env';

export interface LocalHttpsServer {
  server: https.Server;
  port: number;
  /** The self-signed certificate's PEM file: the one CA a client told to trust this server needs. */
  caFile: string;
}

/**
 * A real HTTPS server on 127.0.0.1 and a free port, with a freshly made self-signed certificate valid for
 * localhost, 127.0.0.1 and `hostName` (a public-looking name a test resolves to the loopback).
 */
export async function startLocalHttps(hostName: string, label: string, handler: RequestListener): Promise<LocalHttpsServer> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 2, value: hostName },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  const caFile = path.join(tempDir(label), 'ca.pem');
  fs.writeFileSync(caFile, pems.cert);
  const server = https.createServer({ key: pems.private, cert: pems.cert }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as AddressInfo).port, caFile };
}
