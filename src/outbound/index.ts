/** The service's outbound client, built from the configuration. */
import os from 'node:os';
import type { Config } from '../config.ts';
import { AddressPolicy } from './address-policy.ts';
import { OutboundClient } from './client.ts';

/** Where the service answers: its listen address, or every interface's when it listens on all. */
function ownAddresses(host: string): string[] {
  if (host && host !== '0.0.0.0' && host !== '::') return [host];
  return Object.values(os.networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}

export function createOutboundClient(config: Config): OutboundClient {
  return new OutboundClient(new AddressPolicy(config.connectorAllowedNetworks, ownAddresses(config.host)), config.outbound);
}
