// The right-hand drawer that shows one row's details (a log, an audit entry):
// a dialog named by its sticky title bar, a close button, full width on a phone;
// and the titled sections its details are grouped in.
import CloseIcon from '@mui/icons-material/Close';
import { Box, Drawer, IconButton, Stack, Typography } from '@mui/material';
import { useId, type ReactNode } from 'react';

interface DetailDrawerProps {
  open: boolean;
  onClose: () => void;
  title: string;
  closeLabel: string;
  /** The paper's width from the sm breakpoint up. */
  width: number;
  testId: string;
  children: ReactNode;
}

/** Esc, the backdrop and the close button close it. */
export function DetailDrawer({ open, onClose, title, closeLabel, width, testId, children }: DetailDrawerProps) {
  const titleId = useId();
  return (
    <Drawer
      anchor="right"
      open={open}
      onClose={onClose}
      slotProps={{
        paper: {
          role: 'dialog',
          'aria-modal': true,
          'aria-labelledby': titleId,
          sx: { width: { xs: '100%', sm: width }, maxWidth: '100%' },
          'data-testid': testId,
        } as object,
      }}
    >
      <Stack
        direction="row"
        sx={{
          alignItems: 'center',
          gap: 1,
          px: 2,
          py: 1.5,
          position: 'sticky',
          top: 0,
          zIndex: 1,
          bgcolor: 'background.paper',
          borderBottom: 1,
          borderColor: 'divider',
        }}
      >
        <Typography id={titleId} variant="h6" component="h2" sx={{ fontWeight: 700, flexGrow: 1 }}>
          {title}
        </Typography>
        <IconButton onClick={onClose} aria-label={closeLabel} edge="end">
          <CloseIcon />
        </IconButton>
      </Stack>
      <Box sx={{ px: 2, pb: 2 }}>{children}</Box>
    </Drawer>
  );
}

/** One titled group of the drawer's details, named by its heading; a rule above all but the first. */
export function DrawerSection({ title, children }: { title: string; children: ReactNode }) {
  const id = useId();
  return (
    <Box
      component="section"
      aria-labelledby={id}
      sx={{ py: 1.5, borderTop: 1, borderColor: 'divider', '&:first-of-type': { borderTop: 0 } }}
    >
      <Typography id={id} variant="subtitle1" component="h3" sx={{ fontWeight: 700, mb: 1 }}>
        {title}
      </Typography>
      {children}
    </Box>
  );
}
