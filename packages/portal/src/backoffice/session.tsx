/**
 * The signed-in operator, for any page: who, which role, and what the role may do. The same
 * exports as the portal's (../session.tsx), which the shared step-up dialog and account page read.
 */
import { createContext, useContext } from 'react';
import type { OperatorCapability, OperatorSession } from './types';

export const SessionContext = createContext<OperatorSession | undefined>(undefined);

export function useSession(): OperatorSession | undefined {
  return useContext(SessionContext);
}

/**
 * Whether the operator's role may use `capability`: the pages leave out the buttons of what it
 * may not (the server refuses those requests with 403 FORBIDDEN anyway).
 */
export function useCan(capability: OperatorCapability): boolean {
  const session = useContext(SessionContext);
  return session?.capabilities.includes(capability) ?? false;
}
