// Package state is the DynamoDB adapter for everything Nodewright remembers between invocations: NodeClaim
// records and their lifecycle, leases (single writer), event deduplication, unavailable offerings, the
// disruption-budget ledger, decision records, configuration items and the memory registered Nodes report.
//
// One table per cluster (the CDK stack creates it; CreateTableInput describes the same schema for tests and
// the local sandbox). Keys are strings "pk"/"sk"; "ttl" (epoch seconds) lets DynamoDB expire items, and
// because DynamoDB deletes expired items lazily (up to days later) every read and condition here also
// treats an item whose ttl has passed as absent.
//
// Access patterns:
//
//	item                   pk                          sk                         notes
//	NodeClaim record       CLAIM#<shard>               <claim name>               live claims; shard = FNV-1a(name) mod 16; version for optimistic locking
//	deleted NodeClaim      CLAIMGONE#<shard>           <claim name>               moved here with its deletion (one transaction); ttl (7 days)
//	  by instance id       GSI byInstance: instanceId                             set once the instance exists (live and deleted)
//	  by lifecycle state   GSI byLifecycle: lifecycle  sk                         e.g. every claim still "launched"
//	claim shard counter    CLAIMSHARD                  <shard>                    changes: moved by every write of the shard's live claims
//	replacement marker     REPLACEDBY#<replaced>       <replacement claim>        written before the replacement claim; ttl (7 days)
//	lease                  LEASE                       <lease name>               holder, expiresAt (ms), fencing token
//	dedupe marker          DEDUPE#<scope>#<id>         DEDUPE                     one partition per event id; ttl
//	unavailable offering   UNAVAILABLE                 <capacity>#<type>#<zone>   ttl (3 minutes for capacity errors)
//	unavailable subnet     UNAVAILABLESUBNET           <subnet id>                ttl (3 minutes; InsufficientFreeAddressesInSubnet)
//	class launch failures  CLASSBACKOFF                <EC2NodeClass name>        failures by instance id (newest 32); version; ttl (a day past the back-off)
//	budget counter         BUDGET                      <node pool>                inFlight disruptions
//	budget reservation     BUDGET#<node pool>          <claim name>               one per disrupted claim
//	decision record        DECISION#<subject>          <unix ms>#<id>             ttl (14 days); subject = pod, claim, node pool
//	configuration          CONFIG                      <kind>#<name>              version, hash, spec JSON
//	high-water mark        MARK                        <mark name>                at (ms), only moves forward
//	spot price table       PRICES                      SPOT                       gzip JSON, newer observation wins; ttl 12 h
//	on-demand price table  PRICES                      ONDEMAND                   gzip JSON + source, newer observation wins; ttl 30 days
//	observed memory        MEMORY                      <instance type>#<AMI>      a registered Node's capacity.memory, smallest wins; ttl 60 days
//
// Claims are spread over 16 partition keys so that a mass replacement's writes do not meet on one key, and
// deleted claims leave the live shards so that no live path reads them: ListClaims reads the live shards
// (concurrently), ListDeletedClaims the deleted ones, GetClaim both by key. Every claim write is one
// TransactWriteItems that also moves its shard's counter, so a warm ClaimsView re-reads only the shards
// that changed, and not for the writes of its own store, which it applies as they commit
// (claimsviewown.go). Claims written in the single CLAIM partition of earlier releases are moved to their
// shards by the first listing that finds them (claimmigration.go).
//
// Conflicts of optimistic locking are ErrConflict, a create that finds the item is ErrAlreadyExists; the
// IsX helpers in errors.go test for them. Throttling is retried by the SDK's retryer with more attempts
// than the default (see New). The store never calls time.Now directly: the clock is an Option.
package state
