import RedeemIcon from '@mui/icons-material/Redeem';
import { RedemptionList } from './RedemptionList';

export default {
  list: RedemptionList,
  icon: RedeemIcon,
  recordRepresentation: 'name',
};
