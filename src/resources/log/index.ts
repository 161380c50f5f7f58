// The list loads on demand: a user's first screen and the login page never download it.
import ReceiptLongIcon from '@mui/icons-material/ReceiptLong';
import { lazy } from 'react';

export default {
  list: lazy(() => import('./LogList').then((module) => ({ default: module.LogList }))),
  icon: ReceiptLongIcon,
};
