// /pricing: the models of the signed-in user's group and what each costs, in
// US$ per million tokens with the group's rate applied, searchable by name.
import {
  Box,
  Card,
  CardContent,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Typography,
  useMediaQuery,
  type Theme,
} from '@mui/material';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { Authenticated, useTranslate } from 'react-admin';
import type { ModelPrice } from '../../common/pricing';
import { dataProvider } from '../dataProvider';
import { LoadError } from '../layout/LoadError';
import { COLUMNS, formatDollars, ModelSearch, PriceHeadCells } from '../layout/priceTable';

/** On a phone: each model a block of its own, its four prices in two columns under its name. */
function PriceBlocks({ prices }: { prices: readonly ModelPrice[] }) {
  const translate = useTranslate();
  return (
    <Box component="ul" aria-label={translate('pricing.title')} sx={{ listStyle: 'none', p: 0, m: 0 }}>
      {prices.map((price) => (
        <Box component="li" key={price.model} sx={{ py: 1.5, borderBottom: 1, borderColor: 'divider' }}>
          <Typography
            component="h2"
            sx={{ fontFamily: 'monospace', fontSize: '0.95rem', fontWeight: 600, wordBreak: 'break-all', mb: 0.5 }}
          >
            {price.model}
          </Typography>
          <Box component="dl" sx={{ display: 'grid', gridTemplateColumns: '1fr 1fr', columnGap: 2, rowGap: 0.5, m: 0 }}>
            {COLUMNS.map((column) => (
              <Box key={column} sx={{ display: 'flex', justifyContent: 'space-between', gap: 1 }}>
                <Typography component="dt" variant="body2" color="text.secondary">
                  {translate(`pricing.${column}`)}
                </Typography>
                <Typography component="dd" variant="body2" sx={{ m: 0 }} data-testid={`${price.model}-${column}`}>
                  {formatDollars(price[column])}
                </Typography>
              </Box>
            ))}
          </Box>
        </Box>
      ))}
    </Box>
  );
}

function Pricing() {
  const translate = useTranslate();
  const phone = useMediaQuery((theme: Theme) => theme.breakpoints.down('sm'));
  const [prices, setPrices] = useState<ModelPrice[] | null>(null);
  const [failed, setFailed] = useState(false);
  const [search, setSearch] = useState('');

  const load = useCallback(() => {
    setFailed(false);
    dataProvider
      .getPricing()
      .then(setPrices)
      .catch(() => setFailed(true));
  }, []);
  useEffect(load, [load]);

  const shown = useMemo(() => {
    const wanted = search.trim().toLowerCase();
    return (prices ?? []).filter((price) => !wanted || price.model.toLowerCase().includes(wanted));
  }, [prices, search]);

  return (
    <Card variant="outlined" sx={{ borderRadius: 3, maxWidth: 960, mx: 'auto' }} data-testid="pricing">
      <CardContent sx={{ p: { xs: 2, sm: 4 } }}>
        <Typography variant="h5" component="h1" sx={{ fontWeight: 700, mb: 1 }}>
          {translate('pricing.title')}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
          {translate('pricing.intro')}
        </Typography>
        {failed && <LoadError onRetry={load} />}
        <Box sx={{ mb: 2 }}>
          <ModelSearch value={search} onChange={setSearch} />
        </Box>
        {prices !== null && prices.length === 0 && <Typography>{translate('pricing.none')}</Typography>}
        {prices !== null && prices.length > 0 && (
          <>
            {phone && (
              <Typography variant="caption" color="text.secondary" sx={{ display: 'block' }}>
                {translate('pricing.per_million')}
              </Typography>
            )}
            {phone ? (
              <PriceBlocks prices={shown} />
            ) : (
              <TableContainer>
                <Table size="small" aria-label={translate('pricing.title')}>
                  <TableHead>
                    <TableRow>
                      <PriceHeadCells perMillion />
                    </TableRow>
                  </TableHead>
                  <TableBody>
                    {shown.map((price) => (
                      <TableRow key={price.model} hover>
                        <TableCell component="th" scope="row" sx={{ fontFamily: 'monospace', wordBreak: 'break-all' }}>
                          {price.model}
                        </TableCell>
                        {COLUMNS.map((column) => (
                          <TableCell key={column} align="right" data-testid={`${price.model}-${column}`}>
                            {formatDollars(price[column])}
                          </TableCell>
                        ))}
                      </TableRow>
                    ))}
                  </TableBody>
                </Table>
              </TableContainer>
            )}
            {shown.length === 0 && <Typography sx={{ mt: 2 }}>{translate('pricing.no_match', { search })}</Typography>}
            <Typography variant="caption" color="text.secondary" sx={{ display: 'block', mt: 1 }}>
              {translate('pricing.count', { shown: shown.length, total: prices.length })}
            </Typography>
          </>
        )}
      </CardContent>
    </Card>
  );
}

export default function PricingPage() {
  return (
    <Authenticated>
      <Pricing />
    </Authenticated>
  );
}
