import type { ReactNode } from 'react';

/** A column: its heading, with a class where it has one (`num` right-aligns, `hide-narrow` hides on a phone). */
export type Column = string | { readonly heading: ReactNode; readonly className?: string };

/** The column of a row's buttons: screen readers hear its name, the screen shows none. */
export const ACTIONS_COLUMN: Column = { heading: <span className="visually-hidden">Actions</span> };

/**
 * A table in a labelled region that scrolls sideways on a narrow screen: its column headings, an
 * optional caption (shown, or for screen readers only when `captionHidden`) and the rows the page
 * renders as children.
 */
export function DataTable({
  label,
  columns,
  caption,
  captionHidden = false,
  className,
  busy,
  children,
}: {
  /** The region's name (what a screen reader announces when it enters the table). */
  label: string;
  columns: readonly Column[];
  caption?: ReactNode;
  captionHidden?: boolean;
  className?: string;
  /** `aria-busy` while a list loads its next page. */
  busy?: boolean;
  children: ReactNode;
}) {
  return (
    // A scrollable region must be focusable so keyboard users can scroll it.
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table className={className} aria-busy={busy}>
        {caption !== undefined ? (
          <caption className={captionHidden ? 'visually-hidden' : 'caption'}>{caption}</caption>
        ) : null}
        <thead>
          <tr>
            {columns.map((column, i) => {
              const { heading, className: headingClass } =
                typeof column === 'string' ? { heading: column, className: undefined } : column;
              return (
                <th key={i} scope="col" className={headingClass}>
                  {heading}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
