// /pricing: the models of the signed-in user's group, what each costs (US$ per
// million tokens, the group's rate applied) and the APIs it is reached
// through, searchable by name. When the operator publishes prices (the
// status' `public_pricing`), a visitor sees the default group's list too.
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
import { Fragment, useCallback, useEffect, useMemo, useState } from 'react';
import { Authenticated, useTranslate } from 'react-admin';
import type { ListedModelPrice, ModelEndpoint } from '../../common/pricing';
import { dataProvider } from '../dataProvider';
import { readStoredUser } from '../dataProvider/storage';
import { LoadError } from '../layout/LoadError';
import { LoadingPage } from '../layout/LoadingPage';
import { COLUMNS, formatDollars, ModelSearch, PriceHeadCells } from '../layout/priceTable';
import { useStatus } from '../layout/status';

/** Where each endpoint is, shown when the pointer rests on its name. */
const ENDPOINT_PATHS: Record<ModelEndpoint, string> = {
  chat: 'POST /v1/chat/completions',
  responses: 'POST /v1/responses',
  messages: 'POST /v1/messages',
  gemini: 'POST /v1beta/models/{model}:generateContent',
  completions: 'POST /v1/completions',
  embeddings: 'POST /v1/embeddings',
  images: 'POST /v1/images/generations',
  audio: 'POST /v1/audio/…',
  moderations: 'POST /v1/moderations',
  rerank: 'POST /v1/rerank',
  realtime: 'GET /v1/realtime (WebSocket)',
};

/** A model's endpoints as "chat · responses · messages", a dash when none. */
function Endpoints({ price }: { price: ListedModelPrice }) {
  const translate = useTranslate();
  const endpoints = price.endpoints ?? [];
  if (endpoints.length === 0) return <>—</>;
  return (
    <>
      {endpoints.map((endpoint, index) => (
        <Fragment key={endpoint}>
          {index > 0 && ' · '}
          <span title={ENDPOINT_PATHS[endpoint]}>{translate(`pricing.endpoint.${endpoint}`, { _: endpoint })}</span>
        </Fragment>
      ))}
    </>
  );
}

/** On a phone: each model a block of its own, its four prices in two columns under its name, its endpoints below. */
function PriceBlocks({ prices }: { prices: readonly ListedModelPrice[] }) {
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
          <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }} data-testid={`${price.model}-endpoints`}>
            {translate('pricing.endpoints')}: <Endpoints price={price} />
          </Typography>
        </Box>
      ))}
    </Box>
  );
}

/** On a wider screen: one row per model, its prices, then its endpoints. */
function PriceRows({ prices }: { prices: readonly ListedModelPrice[] }) {
  const translate = useTranslate();
  return (
    <TableContainer>
      <Table size="small" aria-label={translate('pricing.title')}>
        <TableHead>
          <TableRow>
            <PriceHeadCells perMillion />
            <TableCell component="th" scope="col">
              {translate('pricing.endpoints')}
            </TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {prices.map((price) => (
            <TableRow key={price.model} hover>
              <TableCell component="th" scope="row" sx={{ fontFamily: 'monospace', wordBreak: 'break-all' }}>
                {price.model}
              </TableCell>
              {COLUMNS.map((column) => (
                <TableCell key={column} align="right" data-testid={`${price.model}-${column}`}>
                  {formatDollars(price[column])}
                </TableCell>
              ))}
              <TableCell data-testid={`${price.model}-endpoints`} sx={{ color: 'text.secondary' }}>
                <Endpoints price={price} />
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </TableContainer>
  );
}

function Pricing({ visitor = false }: { visitor?: boolean }) {
  const translate = useTranslate();
  const phone = useMediaQuery((theme: Theme) => theme.breakpoints.down('sm'));
  const [prices, setPrices] = useState<ListedModelPrice[] | null>(null);
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
    <Card variant="outlined" sx={{ borderRadius: 3, maxWidth: 1080, mx: 'auto' }} data-testid="pricing">
      <CardContent sx={{ p: { xs: 2, sm: 4 } }}>
        <Typography variant="h5" component="h1" sx={{ fontWeight: 700, mb: 1 }}>
          {translate('pricing.title')}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
          {translate(visitor ? 'pricing.intro_public' : 'pricing.intro')}
        </Typography>
        {failed && <LoadError onRetry={load} />}
        <Box sx={{ mb: 2 }}>
          <ModelSearch value={search} onChange={setSearch} />
        </Box>
        {prices !== null && prices.length === 0 && <Typography>{translate(visitor ? 'pricing.none_public' : 'pricing.none')}</Typography>}
        {prices !== null && prices.length > 0 && (
          <>
            {phone && (
              <Typography variant="caption" color="text.secondary" sx={{ display: 'block' }}>
                {translate('pricing.per_million')}
              </Typography>
            )}
            {phone ? <PriceBlocks prices={shown} /> : <PriceRows prices={shown} />}
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

/** A signed-in user's list; a visitor's when prices are public (the status decides, so a visitor waits for it). */
export default function PricingPage() {
  const { status, failed } = useStatus();
  const translate = useTranslate();
  if (readStoredUser() === null) {
    if (status === null && !failed) return <LoadingPage page={translate('pricing.title')} />;
    if (status?.public_pricing === true) return <Pricing visitor />;
  }
  return (
    <Authenticated>
      <Pricing />
    </Authenticated>
  );
}
