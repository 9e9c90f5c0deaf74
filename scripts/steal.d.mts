/** Types of scripts/steal.mjs (imported by the benches). */
export declare const STEAL_LIMIT: number;
export declare function stealMeter(): () => number;
export declare function percent(share: number): string;
