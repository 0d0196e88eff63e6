/** The name of the image the Dockerfile builds, as the manifests and the docs use it. */
export const IMAGE = 'ghcr.io/chorus/chorus';
