import { hash, verify, type Algorithm } from '@node-rs/argon2';

/** The shortest password the dashboard accepts at sign-up. */
export const MIN_PASSWORD_LENGTH = 12;

/** argon2id with the library's defaults (OWASP's m=19 MiB, t=2, p=1). */
export const hashPassword = (password: string) =>
  // Algorithm is an ambient const enum (unusable under isolatedModules); 2 is its Argon2id.
  hash(password, { algorithm: 2 as Algorithm.Argon2id });

/** Whether `password` is the one `passwordHash` was made from. */
export const passwordMatches = (passwordHash: string, password: string) => verify(passwordHash, password);
