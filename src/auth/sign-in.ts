import type { Deps } from '../deps.js';
import { checkSignIn } from './password.js';
import { findAccountByEmail, saveAccount, type Account } from './store.js';

/**
 * Email and password to an account, or null. Used by every password sign-in (the API's login and
 * the OAuth consent page), so all of them take as long for an unknown email as for a wrong
 * password, and all of them move an old hash up to the current iteration count.
 */
export async function signIn(deps: Pick<Deps, 'redis' | 'passwordIterations'>, email: string, password: string): Promise<Account | null> {
  const account = await findAccountByEmail(deps.redis, email);
  const check = await checkSignIn(password, account?.passwordHash, deps.passwordIterations);
  if (!account || !check.ok) return null;
  if (check.rehash) {
    const upgraded = { ...account, passwordHash: check.rehash };
    await saveAccount(deps.redis, upgraded);
    return upgraded;
  }
  return account;
}
