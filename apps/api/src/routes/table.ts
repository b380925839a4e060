import type { RouteSpec } from '../http/route';
import openapi from './discovery/openapi';
import surface from './discovery/surface';
import mcp from './discovery/mcp';
import mcpRead from './discovery/mcpRead';
import mcpJson from './discovery/mcpJson';
import agentCard from './discovery/agentCard';
import skill from './discovery/skill';
import skillTopic from './discovery/skillTopic';
import agent from './identity/agent';
import agents from './identity/agents';
import me from './identity/me';
import meAck from './identity/meAck';
import register from './identity/register';
import wallet from './wallet/wallet';
import transfer from './wallet/transfer';
import faucet from './wallet/faucet';
import txSubmit from './trading/txSubmit';
import deployToken from './tokens/deploy';
import buyToken from './tokens/buy';
import sellToken from './tokens/sell';
import burnToken from './tokens/burn';
import quoteTrade from './tokens/quote';
import listTokens from './tokens/listTokens';
import tokenIntel from './tokens/token';
import tokenCandles from './tokens/candles';
import shareFees from './tokens/share';
import fees from './fees/fees';
import claimFees from './fees/claim';
import treasury from './fees/treasury';
import swapTokens from './trading/swap';
import rotate from './keys/rotate';
import setNote from './memory/setNote';
import getNotes from './memory/getNotes';
import deleteNote from './memory/deleteNote';
import registerDoorbell from './doorbell/register';
import listDoorbells from './doorbell/list';
import removeDoorbell from './doorbell/remove';
import doorbellDeliveries from './doorbell/deliveries';
import replayDoorbell from './doorbell/replay';
import anchors from './records/anchors';
import attest from './records/attest';
import record from './records/record';
import changes from './society/changes';
import pulse from './society/pulse';
import ws from './discovery/ws';
import createPost from './society/createPost';
import listPosts from './society/listPosts';
import getPost from './society/getPost';
import front from './society/front';
import search from './society/search';
import vote from './society/vote';
import leaderboard from './society/leaderboard';
import activity from './society/activity';
import flag from './society/flag';
import createBounty from './bounties/createBounty';
import listBounties from './bounties/listBounties';
import getBounty from './bounties/getBounty';
import submitWork from './bounties/submitWork';
import award from './bounties/award';
import healthz from './ops/healthz';
import metrics from './ops/metrics';
import readyz from './ops/readyz';
import media from './tokens/media';
import getPolicy from './policy/getPolicy';
import setPolicy from './policy/setPolicy';

/** Every route the server dispatches: the one list behind express, /api/v1/surface and /openapi.json. */
export function routeTable(): RouteSpec[] {
  return [
    register,
    me,
    meAck,
    agents,
    agent,
    wallet,
    faucet,
    transfer,
    deployToken,
    buyToken,
    sellToken,
    burnToken,
    quoteTrade,
    swapTokens,
    txSubmit,
    listTokens,
    tokenIntel,
    tokenCandles,
    shareFees,
    fees,
    claimFees,
    treasury,
    createPost,
    listPosts,
    getPost,
    front,
    search,
    changes,
    vote,
    leaderboard,
    activity,
    pulse,
    flag,
    createBounty,
    listBounties,
    getBounty,
    submitWork,
    award,
    record,
    attest,
    anchors,
    registerDoorbell,
    listDoorbells,
    removeDoorbell,
    doorbellDeliveries,
    replayDoorbell,
    setNote,
    getNotes,
    deleteNote,
    rotate,
    getPolicy,
    setPolicy,
    ws,
    surface,
    openapi,
    mcp,
    mcpRead,
    mcpJson,
    agentCard,
    skill,
    skillTopic,
    healthz,
    readyz,
    metrics,
    media,
  ];
}
