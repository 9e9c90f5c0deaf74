import type { CamtEntry } from '@paygate/iso20022';

/** A transfer's life at the bank. */
export type TransferStatus = 'accepted' | 'booked' | 'rejected';

/** A transfer returned after booking (a `camt.054` `CRDT` `RRTN` entry). */
export interface ReturnRecord {
  /** `Refs/AcctSvcrRef` of the return entry: unique, the platform's `refundNo`. */
  readonly accountServicerRef: string;
  readonly amount: string;
  /** `RtrInf/Rsn/Cd`, e.g. `AC04`. */
  readonly reason: string;
  readonly at: number;
  /** The status file that carried it. */
  readonly file: string;
}

/** One credit transfer of an accepted `pain.001`. */
export interface TransferRecord {
  /** `<MsgId>/<EndToEndId>`: an end-to-end id is the customer's, so only unique within its file. */
  readonly id: string;
  readonly msgId: string;
  readonly endToEndId: string;
  /** EUR, as written in the file (`InstdAmt`). */
  readonly amount: string;
  readonly creditor: { readonly name: string; readonly iban: string; readonly bic?: string | undefined };
  readonly status: TransferStatus;
  /** The reason of a rejection (`AC01`, …). */
  readonly reason?: string;
  readonly takenAt: number;
  /** When it is booked (taken + BANK_BOOK_AFTER). */
  readonly bookAt: number;
  readonly bookedAt?: number;
  /** `AcctSvcrRef` of the booking (`DBIT`) entry. */
  readonly accountServicerRef?: string;
  /** Whether the booking was reported (`pain.002` ACSC and `camt.054` DBIT written); false while held. */
  readonly reported: boolean;
  readonly returns: readonly ReturnRecord[];
  /** A SEPA Instant transfer (`LclInstrm/Cd` `INST`): booked within a second, its own status `ACCC`. */
  readonly instant?: boolean;
  /** Booked with the rest of its file as one entry (`NtryDtls/Btch`): the file's `BtchBookg`, else the customer's setting. */
  readonly batchBooking?: boolean;
  /** `PmtInf/PmtInfId` of its file. */
  readonly pmtInfId?: string;
}

/** What became of an uploaded file. */
export type UploadOutcome = 'accepted' | 'rejected' | 'repeated';

/** A file taken from `/upload`. */
export interface UploadRecord {
  /** Its name in `/upload`. */
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  readonly takenAt: number;
  /** `GrpHdr/MsgId` (for a file that does not parse: the name without `.xml`). */
  readonly msgId: string;
  /**
   * `accepted`; `rejected` (`FF01`: not valid, `DU01`: a `MsgId` already taken); `repeated`: the
   * same bytes as a file already taken under that `MsgId` (an upload that was cut off and sent
   * again) — taken once, nothing is answered again.
   */
  readonly outcome: UploadOutcome;
  readonly reason?: 'FF01' | 'DU01';
  /** Why, in one line (the first XSD error, the rule broken). */
  readonly detail?: string;
  readonly transfers: number;
  /** Where the bank keeps it, relative to the data directory. */
  readonly keptAs: string;
}

/** A status report the bank put into `/download`. */
export interface StatusFileRecord {
  readonly name: string;
  readonly kind: 'pain.002' | 'camt.054' | 'camt.053';
  /** The report's own `GrpHdr/MsgId`. */
  readonly msgId: string;
  /** What it says, for people: `ACSC 3 of MSG-1`, `RJCT FF01 MSG-2`, `return W123 AC04`. */
  readonly about: string;
  readonly createdAt: number;
  /** The name of the file this one repeats (`POST /control/files/duplicate`). */
  readonly duplicateOf?: string;
  /** The bytes, kept only until the file is in `/download` (written after the journal line that records it). */
  readonly xml?: string;
}

export const BOOKING_MODES = ['hold', 'release'] as const;
/** `hold`: transfers are still booked when due, but the booking's status files wait for `release`. */
export type BookingMode = (typeof BOOKING_MODES)[number];

/** What the customer has the bank send: its reports, its booking and its status reports (each per customer at a bank). */
export interface CustomerSettings {
  /** `camt.054` notifications of each booking, `camt.053` statements once a day, or both. */
  readonly reports: 'notifications' | 'statements' | 'both';
  /** Book a file's transfers as one entry (`NtryDtls/Btch`) unless the file's `BtchBookg` says otherwise. */
  readonly batchBooking: boolean;
  /**
   * `pain.002` status reports: `final` (ACSC or RJCT when booked or rejected), `intermediate`
   * (ACTC when a file is taken and ACSP for its block before the final one) or `rejections` (only
   * rejections: bookings are told by the camt files alone).
   */
  readonly statusReports: 'final' | 'intermediate' | 'rejections';
}

export const REPORTS = ['notifications', 'statements', 'both'] as const;
export const STATUS_REPORTS = ['final', 'intermediate', 'rejections'] as const;

/** What the bank does with SEPA Instant transfers: execute them, or reject them (a timeout: `AB05`, …). */
export interface InstantMode {
  readonly mode: 'execute' | 'reject';
  readonly reason?: string;
}

/** A booking on the customer's account, as its notifications and statements report it. */
export interface EntryRecord {
  /** `AcctSvcrRef`: the entry's own reference. */
  readonly ref: string;
  readonly creditDebit: 'CRDT' | 'DBIT';
  /** EUR. */
  readonly amount: string;
  readonly bookedAt: number;
  /** The entry as written (`@paygate/iso20022`'s `CamtEntry`, without `bookedAt`). */
  readonly entry: Omit<CamtEntry, 'bookedAt'>;
  /** The statement that reported it; none yet. */
  readonly statement?: string;
}

/** The account's statements so far: their count, the last one's end and its closing balance (cents). */
export interface StatementState {
  readonly seq: number;
  /** The end of the period the last statement covered (Unix ms); the next one starts there. */
  readonly until: number;
  readonly closingCents: number;
}
