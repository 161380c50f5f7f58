// 模型与价格页面的中文。
export const pricingChinese = {
  pricing: {
    title: '模型与价格',
    link: '模型与价格',
    intro: '你所在分组可用的每个模型的价格，单位为美元 / 百万 tokens，已计入分组倍率。',
    search: '搜索模型',
    model: '模型',
    input: '输入',
    output: '输出',
    cache_read: '缓存输入',
    cache_write: '缓存写入',
    per_million: '$ / 百万 tokens',
    none: '你所在的分组还没有可用的模型。',
    no_match: '没有与“%{search}”匹配的模型。',
    count: '显示 %{shown} / 共 %{total} 个模型',
  },
};
