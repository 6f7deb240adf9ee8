import { type ColumnDef, flexRender, getCoreRowModel, useReactTable } from '@tanstack/react-table';

/** A plain table over TanStack Table's row model: for short lists; long ones use a virtual list. */
export function DataTable<Row>({
  data,
  columns,
  label,
  rowId,
}: {
  data: Row[];
  // biome-ignore lint/suspicious/noExplicitAny: TanStack Table's column values are heterogeneous by design.
  columns: ColumnDef<Row, any>[];
  label: string;
  rowId(row: Row): string;
}) {
  const table = useReactTable({ data, columns, getCoreRowModel: getCoreRowModel(), getRowId: rowId });
  return (
    // Focusable, so a keyboard can scroll a table wider than a narrow screen.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll by keyboard.
    <section className="table-scroll" tabIndex={0} aria-label={`${label} (scrolls sideways)`}>
      <table aria-label={label}>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((header) => (
                <th key={header.id} scope="col">
                  {flexRender(header.column.columnDef.header, header.getContext())}
                </th>
              ))}
            </tr>
          ))}
        </thead>
        <tbody>
          {table.getRowModel().rows.map((row) => (
            <tr key={row.id}>
              {row.getVisibleCells().map((cell) => (
                <td key={cell.id}>{flexRender(cell.column.columnDef.cell, cell.getContext())}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
