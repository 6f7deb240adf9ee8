import { describe, expect, it } from 'vitest';
import { controlPlaneDocsUrl, docsSiteUrl } from '../../scripts/docs-site-url.mjs';

describe('docsSiteUrl (the docs site npm start starts)', () => {
  it('is the default address without settings', () => {
    expect(docsSiteUrl({})).toBe('http://127.0.0.1:4321');
  });

  it('follows DOCS_HOST and DOCS_PORT', () => {
    expect(docsSiteUrl({ DOCS_HOST: 'localhost', DOCS_PORT: '5000' })).toBe('http://localhost:5000');
  });

  it('reaches a wildcard interface on loopback', () => {
    expect(docsSiteUrl({ DOCS_HOST: '0.0.0.0', DOCS_PORT: '5000' })).toBe('http://127.0.0.1:5000');
    expect(docsSiteUrl({ DOCS_HOST: '::', DOCS_PORT: '5000' })).toBe('http://[::1]:5000');
  });

  it('brackets an IPv6 interface', () => {
    expect(docsSiteUrl({ DOCS_HOST: '::1', DOCS_PORT: '5000' })).toBe('http://[::1]:5000');
  });

  it('is SITE_URL when set, without trailing slashes, whatever the interface and port', () => {
    expect(
      docsSiteUrl({
        SITE_URL: ' https://docs.example.test/switchyard/ ',
        DOCS_HOST: '0.0.0.0',
        DOCS_PORT: '5000',
      }),
    ).toBe('https://docs.example.test/switchyard');
  });
});

describe('controlPlaneDocsUrl (SWITCHYARD_DOCS_URL for the control plane)', () => {
  it('is the docs site started alongside', () => {
    expect(controlPlaneDocsUrl({ DOCS_PORT: '5000' })).toBe('http://127.0.0.1:5000');
    expect(controlPlaneDocsUrl({ SITE_URL: 'https://docs.example.test' })).toBe('https://docs.example.test');
  });

  it('keeps the URL the user set', () => {
    expect(
      controlPlaneDocsUrl({
        SWITCHYARD_DOCS_URL: 'https://mirror.example.test/base',
        SITE_URL: 'https://docs.example.test',
        DOCS_PORT: '5000',
      }),
    ).toBe('https://mirror.example.test/base');
  });

  it('ignores an empty SWITCHYARD_DOCS_URL', () => {
    expect(controlPlaneDocsUrl({ SWITCHYARD_DOCS_URL: ' ', DOCS_PORT: '5000' })).toBe(
      'http://127.0.0.1:5000',
    );
  });
});
