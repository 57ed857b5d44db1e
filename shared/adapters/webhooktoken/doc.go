// Package webhooktoken decides which path tokens the pending-pod webhook accepts. The token lives in
// Secrets Manager, never in the function's environment: the source reads the secret's AWSCURRENT version
// (and, during a rotation's overlap window, its AWSPREVIOUS version) with an explicit VersionStage, keeps
// both for a short TTL, and re-reads them — at most once per refresh interval — when a request presents a
// token it does not know, so a warm function follows a rotation without a restart.
//
// Rotation: PutSecretValue moves AWSCURRENT to the new value and AWSPREVIOUS to the old one. The previous
// token stays valid until the current version's CreatedDate plus the overlap window, a time every function
// instance computes alike (a cold start after the rotation grants no fresh window). When Secrets Manager
// does not report a CreatedDate the window runs from when this instance first saw the version.
//
// It is an adapter (Secrets Manager) used by the podwebhook intake. It never logs a token, only version ids.
package webhooktoken
