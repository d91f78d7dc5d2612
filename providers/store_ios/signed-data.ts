import crypto from 'node:crypto';
import {
  Environment,
  SignedDataVerifier,
  VerificationException,
  VerificationStatus,
} from '@apple/app-store-server-library';
import { WebhookVerificationError } from '../errors';
import { PROVIDER } from './errors';
import { operatorHostFetch } from '../../egress/fetch';

/**
 * Apple Root CA - G3, the anchor of every App Store JWS (public certificate,
 * SHA-256 fingerprint 63:34:3A:BF:…:3E:91:79). Used when no trusted roots are configured.
 */
export const APPLE_ROOT_CA_G3_PEM = `
-----BEGIN CERTIFICATE-----
MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwS
QXBwbGUgUm9vdCBDQSAtIEczMSYwJAYDVQQLDB1BcHBsZSBDZXJ0aWZpY2F0aW9u
IEF1dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcN
MTQwNDMwMTgxOTA2WhcNMzkwNDMwMTgxOTA2WjBnMRswGQYDVQQDDBJBcHBsZSBS
b290IENBIC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRpZmljYXRpb24gQXV0aG9y
aXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqGSM49
AgEGBSuBBAAiA2IABJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtf
TjjTuxxEtX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqXl5dvMVztK517
IDvYuVTZXpmkOlEKMaNCMEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySr
MA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2gA
MGUCMQCD6cHEFl4aXTQY2e3v9GwOAEZLuN+yRhHFD/3meoyhpmvOwgPUnPWTxnS4
at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkLF1vLUagM
6BgD56KyKA==
-----END CERTIFICATE-----
`;

/** A trusted root as DER bytes, PEM text or base64 DER (what the emulator's /__control/root-ca returns). */
export type TrustedRoot = Buffer | string;
export type TrustedRoots = TrustedRoot[] | (() => Promise<TrustedRoot[]>);

export function toDer(root: TrustedRoot): Buffer {
  if (Buffer.isBuffer(root)) return root;
  const text = root.trim();
  return text.includes('-----BEGIN') ? new crypto.X509Certificate(text).raw : Buffer.from(text, 'base64');
}

export async function resolveRoots(roots: TrustedRoots | undefined): Promise<Buffer[]> {
  const list = typeof roots === 'function' ? await roots() : (roots ?? [APPLE_ROOT_CA_G3_PEM]);
  return list.map(toDer);
}

/** The emulator's test root, for wiring `trustedRoots` in demo mode and tests. */
export async function fetchEmulatorRootCa(emulatorUrl: string): Promise<Buffer> {
  const res = await operatorHostFetch(`${emulatorUrl.replace(/\/+$/, '')}/__control/root-ca`);
  if (!res.ok) throw new Error(`root-ca answered ${res.status}`);
  const body = (await res.json()) as { der_base64: string };
  return Buffer.from(body.der_base64, 'base64');
}

export interface VerifierConfig {
  roots: Buffer[];
  /** OCSP revocation checks and "now" as the validity date; off for test roots (no OCSP responder). */
  onlineChecks: boolean;
}

export function verifierFor(
  cfg: VerifierConfig,
  environment: Environment,
  bundleId: string,
  appAppleId?: number,
): SignedDataVerifier {
  return new SignedDataVerifier(cfg.roots, cfg.onlineChecks, environment, bundleId, appAppleId);
}

export function verificationReason(err: unknown): string {
  if (err instanceof VerificationException)
    return `JWS verification failed (${VerificationStatus[err.status] ?? err.status})`;
  return 'JWS verification failed';
}

/** Read a JWS payload without verifying it: only to learn which environment and app to verify against. */
export function peekJws(jws: string): Record<string, unknown> {
  const parts = jws.split('.');
  if (parts.length !== 3) throw new WebhookVerificationError(PROVIDER, 'signedPayload is not a compact JWS');
  try {
    const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (!payload || typeof payload !== 'object') throw new Error('not an object');
    return payload as Record<string, unknown>;
  } catch {
    throw new WebhookVerificationError(PROVIDER, 'signedPayload payload is not JSON');
  }
}
