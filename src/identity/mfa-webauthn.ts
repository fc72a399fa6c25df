/**
 * Passkeys (WebAuthn) as a second factor, by @simplewebauthn/server: the relying party is the
 * host of ROOT_URL and only ceremonies of its origin count. Registration and sign-in each answer
 * a challenge the server chose and kept (a pending registration; the login challenge's row), so a
 * response is good for the one ceremony it was made for.
 */
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Config } from '../config.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { NewWebauthnCredential, WebauthnCredentialRow } from './mfa.store.ts';

/** How long a ceremony may take, in the browser and on the server. */
export const CEREMONY_TIMEOUT_MS = 5 * 60_000;
const RP_NAME = 'Gatehouse';

export interface RelyingParty {
  id: string;
  origin: string;
}

export function relyingParty(config: Config): RelyingParty {
  if (!config.rootUrl) throw new NotFoundError('passkeys are off on this server: ROOT_URL is not set');
  return { id: new URL(config.rootUrl).hostname, origin: config.rootUrl };
}

const transportsOf = (row: WebauthnCredentialRow) => (row.transports ? row.transports.split(',') : undefined) as AuthenticatorTransportFuture[] | undefined;
type AuthenticatorTransportFuture = 'ble' | 'cable' | 'hybrid' | 'internal' | 'nfc' | 'smart-card' | 'usb';

export async function registrationOptions(
  rp: RelyingParty,
  user: { id: string; login: string; name: string },
  existing: WebauthnCredentialRow[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userName: user.login,
    userDisplayName: user.name,
    userID: new TextEncoder().encode(user.id),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    // the same authenticator twice would be one factor counted as two
    excludeCredentials: existing.map((row) => ({ id: row.credential_id, transports: transportsOf(row) })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
}

/** The credential a registration response proves, or a 400 saying why it does not. */
export async function verifiedRegistration(
  rp: RelyingParty,
  expectedChallenge: string,
  response: RegistrationResponseJSON,
): Promise<Omit<NewWebauthnCredential, 'userId' | 'name'>> {
  const verification = await verifyRegistrationResponse({
    response,
    expectedChallenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    requireUserVerification: false,
  }).catch((err: Error) => {
    throw new BadRequestError(`the passkey registration is not valid: ${err.message}`);
  });
  if (!verification.verified) throw new BadRequestError('the passkey registration is not valid');
  const { credential } = verification.registrationInfo;
  return {
    credentialId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports ?? [],
  };
}

export async function authenticationOptions(rp: RelyingParty, credentials: WebauthnCredentialRow[]): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.id,
    timeout: CEREMONY_TIMEOUT_MS,
    allowCredentials: credentials.map((row) => ({ id: row.credential_id, transports: transportsOf(row) })),
    userVerification: 'preferred',
  });
}

/** The signature counter after a valid assertion by `credential`, or null when it is not one. */
export async function verifiedAssertion(
  rp: RelyingParty,
  expectedChallenge: string,
  credential: WebauthnCredentialRow,
  response: AuthenticationResponseJSON,
): Promise<number | null> {
  try {
    const verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: credential.credential_id,
        publicKey: new Uint8Array(Buffer.from(credential.public_key, 'base64url')),
        counter: Number(credential.counter),
        transports: transportsOf(credential),
      },
      requireUserVerification: false,
    });
    return verification.verified ? verification.authenticationInfo.newCounter : null;
  } catch {
    return null;
  }
}
