/** The signed-in session, for any page: who, which role, and what the role may do. */
import { createContext, useContext } from 'react';
import type { Capability, Session } from './types';

export const SessionContext = createContext<Session | undefined>(undefined);

/** The signed-in session (pages are only shown inside the signed-in shell). */
export function useSession(): Session | undefined {
  return useContext(SessionContext);
}

/**
 * Whether the session's role may use `capability`: the pages leave out the buttons of what it
 * may not (the server refuses those requests with 403 FORBIDDEN anyway).
 */
export function useCan(capability: Capability): boolean {
  const session = useContext(SessionContext);
  return session?.capabilities.includes(capability) ?? false;
}
