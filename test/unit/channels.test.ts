import { describe, expect, it } from 'vitest';
import { CHANNELS, channelOf, channelSql } from '../../src/analysis/channels.js';

describe('channelOf', () => {
  it.each([
    // [source, utmSource, utmMedium, utmCampaign, channel]
    ['(direct)', '', '', '', 'Direct'],
    ['', '', '', '', 'Direct'],
    ['google.com', '', '', '', 'Organic Search'],
    ['google.co.uk', '', '', '', 'Organic Search'],
    ['google.com.br', '', '', '', 'Organic Search'],
    ['de.search.yahoo.com', '', '', '', 'Organic Search'],
    ['search.brave.com', '', '', '', 'Organic Search'],
    ['yandex.ru', '', '', '', 'Organic Search'],
    ['(direct)', '', 'organic', '', 'Organic Search'],
    ['google', 'google', 'cpc', 'spring', 'Paid Search'],
    ['bing.com', '', 'paid-search', '', 'Paid Search'],
    ['m.facebook.com', '', '', '', 'Organic Social'],
    ['t.co', '', '', '', 'Organic Social'],
    ['news.ycombinator.com', '', '', '', 'Organic Social'],
    ['(direct)', '', 'social-network', '', 'Organic Social'],
    ['fb', 'fb', 'paid', '', 'Paid Social'],
    ['linkedin.com', '', 'ppc', '', 'Paid Social'],
    ['newsletter', 'newsletter', 'email', 'may', 'Email'],
    ['mail.google.com', 'e-mail', '', '', 'Email'],
    ['partner.example', 'partner', 'affiliate', '', 'Affiliates'],
    ['ads.example', 'ads', 'banner', '', 'Display'],
    ['ads.example', 'ads', 'cpm', '', 'Display'],
    ['youtube.com', '', '', '', 'Video'],
    ['m.youtube.com', '', 'cpc', '', 'Video'],
    ['(direct)', '', 'video-ad', '', 'Video'],
    ['github.com', '', '', '', 'Referral'],
    ['mail.google.com', '', '', '', 'Referral'],
    ['app', 'app', 'app', '', 'Referral'],
    ['partner.example', '', '', 'eshop-summer', 'Referral'],
    ['google.com', '', 'cpc', 'shopping-q3', 'Referral'],
    ['partner.example', '', 'cpc', '', 'Other'],
    ['partner.example', '', 'something-else', '', 'Other'],
    ['(direct)', '', 'push', '', 'Other'],
    ['sms', 'sms', '', '', 'Other'],
  ] as const)('%s / %s / %s / %s → %s', (source, utmSource, medium, campaign, channel) => {
    expect(channelOf(source, utmSource, medium, campaign)).toBe(channel);
  });

  it('ignores case in source, medium and campaign', () => {
    expect(channelOf('GOOGLE.DE', '', '', '')).toBe('Organic Search');
    expect(channelOf('x', 'Newsletter', 'E-Mail', '')).toBe('Email');
    expect(channelOf('Google', 'Google', 'CPC', '')).toBe('Paid Search');
    expect(channelOf('(DIRECT)', '', '', '')).toBe('Direct');
    expect(channelOf('partner.example', '', '', 'Summer-SHOP')).toBe('Referral');
  });

  it('matches a shop campaign only as GA4 does (not inside another word)', () => {
    expect(channelOf('partner.example', '', 'newsletter', 'workshop')).toBe('Other');
    expect(channelOf('partner.example', '', 'newsletter', 'shop')).toBe('Referral');
  });

  it('prefers utm_source to the referring host', () => {
    expect(channelOf('facebook.com', 'newsletter', 'email', '')).toBe('Email');
    expect(channelOf('facebook.com', '', '', '')).toBe('Organic Social');
  });

  it('matches brands under country domains but not lookalikes', () => {
    expect(channelOf('google.fr', '', '', '')).toBe('Organic Search');
    expect(channelOf('googlefoo.com', '', '', '')).toBe('Referral');
    expect(channelOf('notfacebook.com', '', '', '')).toBe('Referral');
    expect(channelOf('images.google.de', '', '', '')).toBe('Referral');
    expect(channelOf('bingxcom', '', '', '')).toBe('Referral');
    expect(channelOf('search-brave.com', '', '', '')).toBe('Referral');
    expect(channelOf('google.c', '', '', '')).toBe('Referral');
  });

  it('only answers channels of CHANNELS', () => {
    expect(CHANNELS).toContain(channelOf('a', 'b', 'c', 'd'));
  });
});

describe('channelSql', () => {
  it('reads only the given expressions and can answer every channel', () => {
    const sql = channelSql('s_col', 'us_col', 'um_col', 'uc_col');
    expect(sql.startsWith('multiIf(')).toBe(true);
    expect(sql).toContain('lower(um_col)');
    expect(sql).toContain('lower(uc_col)');
    expect(sql).toContain("if(us_col != '', lower(us_col), lower(s_col))");
    for (const c of CHANNELS) expect(sql).toContain(`'${c}'`);
  });
});
