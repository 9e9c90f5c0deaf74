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
  readonly kind: 'pain.002' | 'camt.054';
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
