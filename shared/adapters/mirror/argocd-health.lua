-- Argo CD health of Nodewright's mirrors: NodeClaim, NodePool and EC2NodeClass of nodewright.sh.
--   Healthy:     Ready is True.
--   Progressing: no status or no Ready condition yet, Ready Unknown, or a NodeClaim whose node is still
--                on its way (Ready False while Launched, Registered or Initialized is Unknown or absent).
--   Degraded:    Ready is False for any other reason (a NodeClaim step that is False, a NodePool or
--                EC2NodeClass that is not ready), with the condition's reason and message.
local function describe(c)
  if c == nil then
    return ""
  end
  local reason = c.reason or ""
  local message = c.message or ""
  if reason ~= "" and message ~= "" then
    return reason .. ": " .. message
  end
  return reason .. message
end

local hs = { status = "Progressing", message = "waiting for the mirror's status" }
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
local conditions = {}
for _, c in ipairs(obj.status.conditions) do
  if c.type ~= nil then
    conditions[c.type] = c
  end
end
local ready = conditions["Ready"]
if ready == nil then
  hs.message = "waiting for the Ready condition"
  return hs
end
if ready.status == "True" then
  hs.status = "Healthy"
  hs.message = describe(ready)
  return hs
end
if ready.status == "False" and obj.kind == "NodeClaim" then
  for _, step in ipairs({ "Launched", "Registered", "Initialized" }) do
    local c = conditions[step]
    if c ~= nil and c.status == "False" then
      hs.status = "Degraded"
      hs.message = step .. " is False: " .. describe(c)
      return hs
    end
    if c == nil or c.status ~= "True" then
      hs.message = describe(ready)
      return hs
    end
  end
end
if ready.status == "False" then
  hs.status = "Degraded"
end
hs.message = describe(ready)
return hs
