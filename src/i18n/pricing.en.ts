// English strings of the models-and-prices page.
export const pricingEnglish = {
  pricing: {
    title: 'Models and prices',
    link: 'Models and prices',
    intro: 'What each model of your group costs, in US$ per million tokens, your group’s rate included.',
    search: 'Search models',
    model: 'Model',
    input: 'Input',
    output: 'Output',
    cache_read: 'Cached input',
    cache_write: 'Cache write',
    per_million: '$ / 1M tokens',
    none: 'No model is available to your group yet.',
    no_match: 'No model matches “%{search}”.',
    count: '%{shown} of %{total} models',
  },
};
