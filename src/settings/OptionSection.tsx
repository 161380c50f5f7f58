// One section of an admin settings tab: its switches (saved at once), its
// fields (held locally) and the save button that sends what changed.
import ExpandMoreIcon from '@mui/icons-material/ExpandMore';
import SaveIcon from '@mui/icons-material/Save';
import { Accordion, AccordionDetails, AccordionSummary, Box, Button, Card, CardContent, Grid, Stack, Typography } from '@mui/material';
import { useId, type ReactNode } from 'react';
import { useTranslate } from 'react-admin';
import { OPTION_SPECS } from '../../common/options';
import { OptionInput, OptionToggle } from './OptionFields';
import { FIELD_HINTS, type SettingSection, type SettingTab } from './sections';
import type { OptionForm } from './useOptionForm';

/** A titled card; a region named by its title, so tests and screen readers can find it. */
export function SectionCard({ title, help, children }: { title: string; help?: string; children: ReactNode }) {
  const headingId = useId();
  return (
    <Card component="section" variant="outlined" aria-labelledby={headingId} sx={{ borderRadius: 3 }}>
      <CardContent sx={{ p: { xs: 2, sm: 3 } }}>
        <Typography id={headingId} variant="h6" component="h2" sx={{ fontWeight: 700, mb: help ? 0.5 : 2, fontSize: 18 }}>
          {title}
        </Typography>
        {help && (
          <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
            {help}
          </Typography>
        )}
        {children}
      </CardContent>
    </Card>
  );
}

export function OptionSection({
  tab,
  section,
  form,
  extra,
  actions,
  lead,
}: {
  tab: SettingTab;
  section: SettingSection;
  form: OptionForm;
  /** Shown first; the fields then fold under "Advanced" (the price table over the raw ratio JSON). */
  lead?: ReactNode;
  /** Shown under the fields (e.g. the GitHub callback address). */
  extra?: ReactNode;
  /** Shown beside the save button (e.g. "send test e-mail"). */
  actions?: ReactNode;
}) {
  const translate = useTranslate();
  const name = `${tab}_${section.id}`;
  const toggles = section.keys.filter((key) => OPTION_SPECS[key].kind === 'toggle');
  const fields = section.keys.filter((key) => OPTION_SPECS[key].kind !== 'toggle');
  const writable = fields.some((key) => form.canWrite(key));
  const body = (
    <>
      {fields.length > 0 && (
        <Grid container spacing={2}>
          {fields.map((key) => (
            <Grid key={key} size={{ xs: 12, md: FIELD_HINTS[key]?.rows || OPTION_SPECS[key].kind === 'list' ? 12 : 6 }}>
              <OptionInput form={form} optionKey={key} />
            </Grid>
          ))}
        </Grid>
      )}
      {extra}
      {fields.length > 0 && (
        <Stack direction="row" spacing={1} sx={{ mt: 2, justifyContent: 'flex-end', flexWrap: 'wrap', rowGap: 1 }}>
          {actions}
          <Button
            variant="contained"
            disableElevation
            startIcon={<SaveIcon />}
            disabled={!writable || form.saving}
            onClick={() => void form.saveSection(fields)}
          >
            {translate('settings.save')}
          </Button>
        </Stack>
      )}
    </>
  );
  return (
    <SectionCard title={translate(`settings.section.${name}`)} help={translate(`settings.section_help.${name}`, { _: '' }) || undefined}>
      {toggles.length > 0 && (
        <Box sx={{ display: 'flex', flexWrap: 'wrap', mb: fields.length ? 2 : 0 }}>
          {toggles.map((key) => (
            <OptionToggle key={key} form={form} optionKey={key} />
          ))}
        </Box>
      )}
      {lead}
      {lead ? (
        <Accordion disableGutters variant="outlined" sx={{ mt: 2, borderRadius: 2, '&::before': { display: 'none' } }}>
          <AccordionSummary expandIcon={<ExpandMoreIcon />}>
            <Typography sx={{ fontWeight: 600 }}>{translate('settings.advanced')}</Typography>
          </AccordionSummary>
          <AccordionDetails>{body}</AccordionDetails>
        </Accordion>
      ) : (
        body
      )}
    </SectionCard>
  );
}
