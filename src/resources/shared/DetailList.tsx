// A list whose rows open in a drawer (the log, the audit log): a table where a
// click on a row opens it, cards on a phone where a tap on a card does, and
// on both a button that opens it, the keyboard's way to the same drawer.
import OpenInFullIcon from '@mui/icons-material/OpenInFull';
import { IconButton } from '@mui/material';
import type { MouseEvent, ReactNode } from 'react';
import { Datagrid, useRecordContext, useTranslate, type DatagridProps, type RaRecord } from 'react-admin';
import { CardList } from './CardList';
import { ListEmpty } from './ListFrame';

type OnOpen = (record: RaRecord) => void;

/** Opens the row's drawer; `openLabel` (a translation key) names the button. `label` and `sortable` are the column's. */
export function OpenDetailsButton({ openLabel, onOpen }: { label?: string; sortable?: boolean; openLabel: string; onOpen: OnOpen }) {
  const record = useRecordContext();
  const translate = useTranslate();
  if (!record) return null;
  const label = translate(openLabel);
  return (
    <IconButton
      size="small"
      aria-label={label}
      title={label}
      onClick={(event: MouseEvent) => {
        event.stopPropagation();
        onOpen(record);
      }}
    >
      <OpenInFullIcon fontSize="inherit" />
    </IconButton>
  );
}

/** The table (wider screens): a click on a row opens it. */
export function DetailTable({
  onOpen,
  emptyDefaults,
  sx,
  children,
}: {
  onOpen: OnOpen;
  /** The filters the list always carries (see ListEmpty). */
  emptyDefaults?: Record<string, unknown>;
  sx: DatagridProps['sx'];
  children: ReactNode;
}) {
  return (
    <Datagrid
      empty={<ListEmpty defaults={emptyDefaults} />}
      bulkActionButtons={false}
      rowClick={(_id, _resource, record) => {
        onOpen(record);
        return false;
      }}
      sx={sx}
    >
      {children}
    </Datagrid>
  );
}

/** The cards (phones): a tap on a card, or its button, opens it. */
export function DetailCards({
  title,
  onOpen,
  openLabel,
  emptyDefaults,
  children,
}: {
  title: ReactNode;
  onOpen: OnOpen;
  /** The open button's name (a translation key). */
  openLabel: string;
  emptyDefaults?: Record<string, unknown>;
  children: ReactNode;
}) {
  return (
    <CardList
      title={title}
      onOpen={onOpen}
      emptyDefaults={emptyDefaults}
      actions={<OpenDetailsButton openLabel={openLabel} onOpen={onOpen} />}
    >
      {children}
    </CardList>
  );
}
