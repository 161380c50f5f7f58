// The dashboard's charts, drawn with @mui/x-charts in the MUI theme's colours
// (so they follow light and dark palettes). Loaded on demand: the login page
// and the stat cards never wait for the charts library. Each chart has an
// SVG title and description, and a data table under it for readers that
// cannot see the drawing.
import TableChartOutlinedIcon from '@mui/icons-material/TableChartOutlined';
import { Box, Button, Collapse, Grid, useMediaQuery, useTheme } from '@mui/material';
import { BarChart } from '@mui/x-charts/BarChart';
import { LineChart, lineClasses } from '@mui/x-charts/LineChart';
import { PieChart } from '@mui/x-charts/PieChart';
import { useId, useState, type ReactNode } from 'react';
import type { Dashboard } from '../../common/dashboard';
import { DataTable, ErrorsLink, SectionCard, type Column, type ErrorLogPath } from './DashboardTables';
import { useDashboardFormat } from './format';
import { useDashboardTranslate } from './useDashboardTranslate';

const CHART_HEIGHT = 260;
const BUCKET_SECONDS = { hour: 3600, day: 86_400 } as const;
/** Read by screen readers, not drawn. */
const visuallyHidden = {
  position: 'absolute',
  width: '1px',
  height: '1px',
  margin: '-1px',
  padding: 0,
  overflow: 'hidden',
  clip: 'rect(0 0 0 0)',
  whiteSpace: 'nowrap',
  border: 0,
} as const;

/** A chart with its heading and a data table that can be shown under it. */
function ChartCard<Row>({
  id,
  title,
  description,
  chart,
  rows,
  columns,
  rowKey,
}: {
  id: string;
  title: string;
  description: string;
  chart: ReactNode;
  rows: Row[];
  columns: Column<Row>[];
  rowKey: (row: Row) => string;
}) {
  const translate = useDashboardTranslate();
  const [tableShown, setTableShown] = useState(false);
  const tableId = useId();
  const descriptionId = useId();
  return (
    <SectionCard
      id={id}
      title={title}
      action={
        <Button
          size="small"
          startIcon={<TableChartOutlinedIcon />}
          onClick={() => setTableShown((shown) => !shown)}
          aria-expanded={tableShown}
          aria-controls={tableId}
        >
          {translate(tableShown ? 'dashboard.charts.hide_table' : 'dashboard.charts.show_table')}
        </Button>
      }
    >
      {/* the figure is named by the card's heading; x-charts' own title goes on a role="none" element, which axe rejects */}
      <Box
        role="figure"
        aria-labelledby={`section-${id}`}
        aria-describedby={descriptionId}
        sx={{ width: '100%', minWidth: 0 }}
        data-testid={`chart-${id}`}
      >
        <Box component="span" id={descriptionId} sx={visuallyHidden}>
          {description}
        </Box>
        {chart}
      </Box>
      <Collapse in={tableShown} id={tableId} unmountOnExit>
        <Box sx={{ mt: 1, maxHeight: 320, overflowY: 'auto' }}>
          <DataTable rows={rows} columns={columns} rowKey={rowKey} label={title} />
        </Box>
      </Collapse>
    </SectionCard>
  );
}

/** Series colours from the theme, never fixed hex: they follow the palette in light and dark. */
function useChartColors(): string[] {
  const { palette } = useTheme();
  return [
    palette.primary.main,
    palette.secondary.main,
    palette.success.main,
    palette.warning.main,
    palette.info.main,
    palette.error.main,
    palette.primary.light,
    palette.secondary.light,
    palette.success.light,
    palette.warning.light,
  ];
}

/** What every chart of the range shares: formats, labels, colours, the table's time column and the range line. */
function useChartKit(data: Dashboard) {
  const translate = useDashboardTranslate();
  const format = useDashboardFormat();
  const colors = useChartColors();
  const narrow = useMediaQuery(useTheme().breakpoints.down('sm'));
  const { series, by_model: byModel, granularity } = data;
  const buckets = series.map((point) => point.bucket);
  const bucketLabel = (value: number) => format.bucket(value, granularity);
  const range = { start: format.dateTime(data.start), end: format.dateTime(data.end), count: series.length };
  const spendLabel = translate('dashboard.charts.spend');
  // ticks compact, so a million fits the axis; tooltips exact
  const moneyTick = (value: number | null) => (value === null ? '' : format.moneyTick(value));
  const moneyTooltip = (value: number | null) => (value === null ? '' : format.moneyOfAmount(value));
  const countTick = (value: number | null) => (value === null ? '' : format.countTick(value));
  const countTooltip = (value: number | null) => (value === null ? '' : format.count(value));
  const timeColumn: Column<Dashboard['series'][number]> = {
    key: 'bucket',
    label: translate('dashboard.charts.time'),
    render: (point) => bucketLabel(point.bucket),
  };
  return {
    translate,
    format,
    colors,
    narrow,
    series,
    byModel,
    buckets,
    bucketLabel,
    range,
    spendLabel,
    moneyTick,
    moneyTooltip,
    countTick,
    countTooltip,
    timeColumn,
  };
}

interface ChartProps {
  data: Dashboard;
  errorLog: ErrorLogPath;
}

/** Spend, requests and errors per bucket, as an area line of spend. */
function SpendOverTime({ data, errorLog }: ChartProps) {
  const { translate, format, colors, series, buckets, bucketLabel, range, spendLabel, moneyTick, moneyTooltip, timeColumn } =
    useChartKit(data);
  const spendTitle = translate('dashboard.charts.spend_over_time');
  return (
    <ChartCard
      id="spend-over-time"
      title={spendTitle}
      description={translate('dashboard.charts.description', { title: spendTitle, ...range })}
      rows={series}
      rowKey={(point) => String(point.bucket)}
      columns={[
        timeColumn,
        { key: 'spend', label: spendLabel, numeric: true, render: (point) => format.money(point.quota) },
        {
          key: 'requests',
          label: translate('dashboard.charts.requests'),
          numeric: true,
          render: (point) => format.count(point.requests),
        },
        {
          key: 'errors',
          label: translate('dashboard.charts.errors'),
          numeric: true,
          render: (point) => (
            <ErrorsLink
              count={point.errors}
              to={errorLog({ start_timestamp: point.bucket, end_timestamp: point.bucket + BUCKET_SECONDS[data.granularity] - 1 })}
            />
          ),
        },
      ]}
      chart={
        <LineChart
          height={CHART_HEIGHT}
          xAxis={[{ scaleType: 'point', data: buckets, valueFormatter: bucketLabel }]}
          yAxis={[{ valueFormatter: moneyTick, width: 64 }]}
          series={[
            {
              id: 'spend',
              label: spendLabel,
              data: series.map((point) => format.amount(point.quota)),
              color: colors[0],
              area: true,
              showMark: series.length <= 31,
              valueFormatter: moneyTooltip,
            },
          ]}
          hideLegend
          grid={{ horizontal: true }}
          sx={{ [`& .${lineClasses.area}`]: { fillOpacity: 0.18 } }}
        />
      }
    />
  );
}

/** Prompt and completion tokens per bucket, stacked bars. */
function TokensOverTime({ data }: Pick<ChartProps, 'data'>) {
  const { translate, format, colors, series, buckets, bucketLabel, range, countTick, countTooltip, timeColumn } = useChartKit(data);
  const tokensTitle = translate('dashboard.charts.tokens_over_time');
  return (
    <ChartCard
      id="tokens-over-time"
      title={tokensTitle}
      description={translate('dashboard.charts.description', { title: tokensTitle, ...range })}
      rows={series}
      rowKey={(point) => String(point.bucket)}
      columns={[
        timeColumn,
        {
          key: 'prompt',
          label: translate('dashboard.charts.prompt_tokens'),
          numeric: true,
          render: (point) => format.count(point.prompt_tokens),
        },
        {
          key: 'completion',
          label: translate('dashboard.charts.completion_tokens'),
          numeric: true,
          render: (point) => format.count(point.completion_tokens),
        },
      ]}
      chart={
        <BarChart
          height={CHART_HEIGHT}
          xAxis={[{ scaleType: 'band', data: buckets, valueFormatter: bucketLabel }]}
          yAxis={[{ valueFormatter: countTick, width: 56 }]}
          series={[
            {
              id: 'prompt',
              label: translate('dashboard.charts.prompt_tokens'),
              data: series.map((point) => point.prompt_tokens),
              stack: 'tokens',
              color: colors[0],
              valueFormatter: countTooltip,
            },
            {
              id: 'completion',
              label: translate('dashboard.charts.completion_tokens'),
              data: series.map((point) => point.completion_tokens),
              stack: 'tokens',
              color: colors[1],
              valueFormatter: countTooltip,
            },
          ]}
          grid={{ horizontal: true }}
        />
      }
    />
  );
}

/** Each model's share of the spend, as a ring. */
function SpendByModel({ data }: Pick<ChartProps, 'data'>) {
  const { translate, format, colors, narrow, byModel, spendLabel } = useChartKit(data);
  const pieTitle = translate('dashboard.charts.spend_by_model');
  return (
    <ChartCard
      id="spend-by-model"
      title={pieTitle}
      description={translate('dashboard.charts.description_models', { title: pieTitle, count: byModel.length })}
      rows={byModel}
      rowKey={(model) => model.model}
      columns={[
        { key: 'model', label: translate('dashboard.tables.model'), render: (model) => model.model },
        { key: 'spend', label: spendLabel, numeric: true, render: (model) => format.money(model.quota) },
      ]}
      chart={
        <PieChart
          height={CHART_HEIGHT}
          colors={colors}
          series={[
            {
              id: 'spend-by-model',
              innerRadius: 50,
              paddingAngle: 1,
              cornerRadius: 3,
              data: byModel.map((model, index) => ({
                id: model.model,
                label: model.model,
                value: format.amount(model.quota),
                color: colors[index % colors.length],
              })),
              valueFormatter: (item) => format.moneyOfAmount(item.value),
            },
          ]}
          slotProps={{
            legend: {
              direction: narrow ? 'horizontal' : 'vertical',
              position: narrow ? { vertical: 'bottom', horizontal: 'center' } : { vertical: 'middle', horizontal: 'end' },
            },
          }}
        />
      }
    />
  );
}

/** Requests and errors per model, stacked horizontal bars. */
function RequestsByModel({ data, errorLog }: ChartProps) {
  const { translate, format, colors, narrow, byModel, countTick, countTooltip } = useChartKit(data);
  const modelBarsTitle = translate('dashboard.charts.requests_by_model');
  return (
    <ChartCard
      id="requests-by-model"
      title={modelBarsTitle}
      description={translate('dashboard.charts.description_models', { title: modelBarsTitle, count: byModel.length })}
      rows={byModel}
      rowKey={(model) => model.model}
      columns={[
        { key: 'model', label: translate('dashboard.tables.model'), render: (model) => model.model },
        {
          key: 'requests',
          label: translate('dashboard.charts.requests'),
          numeric: true,
          render: (model) => format.count(model.requests),
        },
        {
          key: 'errors',
          label: translate('dashboard.charts.errors'),
          numeric: true,
          render: (model) => <ErrorsLink count={model.errors} to={errorLog({ model_name: model.model })} />,
        },
      ]}
      chart={
        <BarChart
          height={CHART_HEIGHT}
          layout="horizontal"
          yAxis={[{ scaleType: 'band', data: byModel.map((model) => model.model), width: narrow ? 96 : 140 }]}
          xAxis={[{ valueFormatter: countTick }]}
          series={[
            {
              id: 'requests',
              label: translate('dashboard.charts.requests'),
              data: byModel.map((model) => model.requests),
              stack: 'calls',
              color: colors[0],
              valueFormatter: countTooltip,
            },
            {
              id: 'errors',
              label: translate('dashboard.charts.errors'),
              data: byModel.map((model) => model.errors),
              stack: 'calls',
              color: colors[5],
              valueFormatter: countTooltip,
            },
          ]}
          grid={{ vertical: true }}
        />
      }
    />
  );
}

/** The range's four charts, two by two (one a row on a phone), each with its data as a table too. */
export default function DashboardCharts({ data, errorLog }: ChartProps) {
  return (
    <Grid container spacing={2}>
      <Grid size={{ xs: 12, md: 6 }}>
        <SpendOverTime data={data} errorLog={errorLog} />
      </Grid>
      <Grid size={{ xs: 12, md: 6 }}>
        <TokensOverTime data={data} />
      </Grid>
      <Grid size={{ xs: 12, md: 6 }}>
        <SpendByModel data={data} />
      </Grid>
      <Grid size={{ xs: 12, md: 6 }}>
        <RequestsByModel data={data} errorLog={errorLog} />
      </Grid>
    </Grid>
  );
}
