/** One order of a channel's day as reconciliation compares it with the settlement file. */
export interface BookRow {
  type: 'charge' | 'transfer' | 'return';
  reference: string;
  status: string;
  currency: string;
  amount_minor: bigint;
  paid_minor: bigint | null;
  /** Final (or, for a return, refunded) within the day. */
  in_day: boolean;
}

/** Which orders of a channel reconciliation reads: those final in [from, to) and those the file names. */
export interface BookDay {
  readonly channel: string;
  readonly from: Date;
  readonly to: Date;
  readonly references: readonly string[];
}
