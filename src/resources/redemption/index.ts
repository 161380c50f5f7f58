// The list loads on demand: a user's first screen and the login page never download it.
import RedeemIcon from '@mui/icons-material/Redeem';
import { lazy } from 'react';

export default {
  list: lazy(() => import('./RedemptionList').then((module) => ({ default: module.RedemptionList }))),
  icon: RedeemIcon,
  recordRepresentation: 'name',
};
