/** The configured external login providers, built once from the config. */
import type { Config, OAuthProviderId } from '../../config.ts';
import { codehostProvider } from './codehost.ts';
import { genericProvider } from './generic.ts';
import type { LoginProvider } from './types.ts';
import { workspaceProvider } from './workspace.ts';

export class LoginProviderRegistry {
  private readonly providers = new Map<OAuthProviderId, LoginProvider>();

  constructor(config: Config) {
    for (const provider of [codehostProvider(config), workspaceProvider(config), genericProvider(config)]) {
      if (provider) this.providers.set(provider.id, provider);
    }
  }

  /** The provider, or undefined when it is not configured. */
  get(id: OAuthProviderId): LoginProvider | undefined {
    return this.providers.get(id);
  }
}
